package coordinator

import (
	"strings"
	"testing"
)

// An s3:// store is no path of the coordinator's machine: the data
// directories do not confine it, but a submission may not choose the
// server its credentials go to.
func TestStoreURLS3(t *testing.T) {
	for _, dirs := range [][]string{nil, {t.TempDir()}} {
		got, err := storeURL("s3://bucket/a/b/", dirs)
		if err != nil || got != "s3://bucket/a/b" {
			t.Fatalf("dirs %v: %q, %v", dirs, got, err)
		}
		if got, err := storeURL("s3://bucket/a?region=eu-west-1", dirs); err != nil || got != "s3://bucket/a?region=eu-west-1" {
			t.Fatalf("dirs %v: %q, %v", dirs, got, err)
		}
	}
	for url, want := range map[string]string{
		"s3://bucket/a?endpoint=10.0.0.1:80": "may not choose the server (option endpoint)",
		"s3://bucket/a?insecure=1":           "may not choose the server (option insecure)",
		"s3://bucket/a?style=path":           "may not choose the server (option style)",
		"s3://B/a":                           "bucket name",
		"s3://bucket/../etc":                 `".."`,
	} {
		if _, err := storeURL(url, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", url, err, want)
		}
	}
}
