package storage

import (
	"strings"
	"testing"
)

func TestParseS3URL(t *testing.T) {
	tests := []struct {
		url, bucket, prefix, canon, wantErr string
	}{
		{url: "s3://bucket/prefix", bucket: "bucket", prefix: "prefix", canon: "s3://bucket/prefix"},
		{url: "S3://bucket/a/b/", bucket: "bucket", prefix: "a/b", canon: "s3://bucket/a/b"},
		{url: "s3://bucket", bucket: "bucket", prefix: "", canon: "s3://bucket"},
		{url: "s3://bucket/", bucket: "bucket", prefix: "", canon: "s3://bucket"},
		{url: "s3://my.bucket-1/x%20y", bucket: "my.bucket-1", prefix: "x y", canon: "s3://my.bucket-1/x%20y"},
		{url: "s3://b12/p?insecure=1&endpoint=127.0.0.1:8333", bucket: "b12", prefix: "p", canon: "s3://b12/p?endpoint=127.0.0.1%3A8333&insecure=1"},
		{url: "s3://b12/p?style=path&region=eu-west-1&retries=3", bucket: "b12", prefix: "p", canon: "s3://b12/p?region=eu-west-1&retries=3&style=path"},
		{url: "s3://", wantErr: "no bucket"},
		{url: "s3:///p", wantErr: "no bucket"},
		{url: "s3://ab/p", wantErr: "3 to 63 characters"},
		{url: "s3://Bucket/p", wantErr: "lower-case"},
		{url: "s3://-bucket/p", wantErr: "lower-case"},
		{url: "s3://bu_cket/p", wantErr: "lower-case"},
		{url: "s3://bucket/a//b", wantErr: "empty"},
		{url: "s3://bucket/a/../b", wantErr: `".."`},
		{url: "s3://bucket/p#x", wantErr: "fragment"},
		{url: "s3://bucket/p?nope=1", wantErr: `unknown option "nope"`},
		{url: "s3://bucket/p?insecure=1&insecure=0", wantErr: "given 2 times"},
		{url: "s3://bucket/p?insecure=maybe", wantErr: "not a boolean"},
		{url: "s3://bucket/p?style=dns", wantErr: "want path or virtual"},
		{url: "s3://bucket/p?retries=0", wantErr: "from 1 to 100"},
		{url: "s3://bucket/p?endpoint=ftp://h:1", wantErr: "HOST:PORT"},
		{url: "s3://bucket/p?endpoint=h:1/x", wantErr: "HOST:PORT"},
		{url: "file:///x", wantErr: "not an s3:// URL"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			loc, err := ParseS3URL(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loc.Bucket != tc.bucket || loc.Prefix != tc.prefix || loc.URL() != tc.canon {
				t.Fatalf("got bucket %q prefix %q URL %q, want %q %q %q", loc.Bucket, loc.Prefix, loc.URL(), tc.bucket, tc.prefix, tc.canon)
			}
			again, err := ParseS3URL(loc.URL())
			if err != nil || again.URL() != loc.URL() {
				t.Fatalf("URL %q does not parse back: %v", loc.URL(), err)
			}
		})
	}
}

func TestS3Settings(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		url    string
		env    map[string]string
		want   s3Settings
		errHas string
	}{
		{url: "s3://bucket/p", want: s3Settings{endpoint: "s3.amazonaws.com", secure: true, aws: true, retries: DefaultS3Retries}},
		{url: "s3://bucket/p", env: map[string]string{"AWS_REGION": "eu-west-1"},
			want: s3Settings{endpoint: "s3.amazonaws.com", secure: true, aws: true, region: "eu-west-1", retries: DefaultS3Retries}},
		{url: "s3://bucket/p?endpoint=127.0.0.1:8333&insecure=1",
			want: s3Settings{endpoint: "127.0.0.1:8333", pathStyle: true, region: "us-east-1", retries: DefaultS3Retries}},
		{url: "s3://bucket/p", env: map[string]string{"TRIGRID_S3_ENDPOINT": "http://127.0.0.1:9000/"},
			want: s3Settings{endpoint: "127.0.0.1:9000", pathStyle: true, region: "us-east-1", retries: DefaultS3Retries}},
		{url: "s3://bucket/p", env: map[string]string{"AWS_ENDPOINT_URL": "https://s3.example.test", "AWS_DEFAULT_REGION": "r1", "TRIGRID_S3_STYLE": "virtual"},
			want: s3Settings{endpoint: "s3.example.test", secure: true, region: "r1", retries: DefaultS3Retries}},
		// The URL's option wins over the environment's.
		{url: "s3://bucket/p?endpoint=10.0.0.1:1&retries=2", env: map[string]string{"TRIGRID_S3_ENDPOINT": "http://127.0.0.1:9000", "AWS_ENDPOINT_URL": "http://x:1", "TRIGRID_S3_RETRIES": "7"},
			want: s3Settings{endpoint: "10.0.0.1:1", secure: true, pathStyle: true, region: "us-east-1", retries: 2}},
		{url: "s3://bucket/p", env: map[string]string{"TRIGRID_S3_ENDPOINT": "h:1", "TRIGRID_S3_INSECURE": "true", "TRIGRID_S3_RETRIES": "7"},
			want: s3Settings{endpoint: "h:1", pathStyle: true, region: "us-east-1", retries: 7}},
		{url: "s3://bucket/p", env: map[string]string{"TRIGRID_S3_INSECURE": "yes please"}, errHas: "TRIGRID_S3_INSECURE"},
		{url: "s3://bucket/p", env: map[string]string{"TRIGRID_S3_RETRIES": "-1"}, errHas: "TRIGRID_S3_RETRIES"},
	}
	for _, tc := range tests {
		loc, err := ParseS3URL(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := loc.settings(env(tc.env))
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s %v: error %v, want one naming %s", tc.url, tc.env, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %v: %v", tc.url, tc.env, err)
			continue
		}
		if *got != tc.want {
			t.Errorf("%s %v: got %+v, want %+v", tc.url, tc.env, *got, tc.want)
		}
	}
}

// Opening contacts nothing, and the object names in errors are s3 URLs.
func TestOpenS3(t *testing.T) {
	t.Setenv("TRIGRID_S3_ENDPOINT", "")
	s, err := Open("s3://bucket/a/b?endpoint=127.0.0.1:1&insecure=1&retries=1")
	if err != nil {
		t.Fatal(err)
	}
	if !IsS3(s) || s.URL() != "s3://bucket/a/b?endpoint=127.0.0.1%3A1&insecure=1&retries=1" {
		t.Fatalf("store %T %s", s, s.URL())
	}
	if got := s.(*s3Store).ObjectURL(ManifestName); got != "s3://bucket/a/b/manifest.json" {
		t.Fatalf("ObjectURL %s", got)
	}
	if _, local := LocalDir(s); local {
		t.Fatal("an s3 store is a local directory")
	}
	if _, ok := s.(Remover); !ok {
		t.Fatal("an s3 store is no Remover")
	}
	// Nothing listens on port 1: a transient error, tried once.
	_, err = s.Get(t.Context(), ManifestName)
	if err == nil || !strings.Contains(err.Error(), "s3://bucket/a/b/manifest.json") || !strings.Contains(err.Error(), "gave up after 1 tries") {
		t.Fatalf("error %v", err)
	}
	if err := s.Put(t.Context(), "../x", nil); err == nil {
		t.Fatal("Put of ../x worked")
	}
}
