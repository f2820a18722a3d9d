package storage

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

// S3Location is a parsed s3:// store URL:
//
//	s3://BUCKET[/PREFIX][?endpoint=HOST:PORT&insecure=1&style=path&region=R&retries=N]
//
// The objects of the store are PREFIX/NAME (NAME alone with no prefix).
// The query options say where the server is; every one may instead come
// from the environment (S3Options), and a URL's option wins over the
// environment's.
type S3Location struct {
	Bucket string
	Prefix string // no leading or trailing slash; "" for the bucket's top
	// Options are the query options the URL gave, checked; URL() writes
	// them back so that Open(store.URL()) is the same store.
	Options url.Values
}

// s3URLOptions are the query options an s3:// URL may carry.
var s3URLOptions = []string{"endpoint", "insecure", "style", "region", "retries"}

// S3ConnectionOptions are the URL options that choose which server is
// contacted and how; a server that takes store URLs from clients (the
// coordinator) refuses them, since its credentials would go wherever
// they point.
var S3ConnectionOptions = []string{"endpoint", "insecure", "style"}

// ParseS3URL parses an s3:// store URL. The bucket must be a valid S3
// bucket name; the prefix may not hold empty, "." or ".." segments.
func ParseS3URL(raw string) (*S3Location, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || !strings.EqualFold(scheme, "s3") {
		return nil, fmt.Errorf("storage: %q is not an s3:// URL", raw)
	}
	rest, query, _ := strings.Cut(rest, "?")
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		return nil, fmt.Errorf("storage: store URL %q: a fragment (#) is not allowed", raw)
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if err := checkBucketName(bucket); err != nil {
		return nil, fmt.Errorf("storage: store URL %q: %w", raw, err)
	}
	prefix, err := url.PathUnescape(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, fmt.Errorf("storage: store URL %q: %w", raw, err)
	}
	if prefix != "" {
		for seg := range strings.SplitSeq(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, 0) {
				return nil, fmt.Errorf("storage: store URL %q: the prefix %q has an empty, \".\" or \"..\" segment", raw, prefix)
			}
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("storage: store URL %q: %w", raw, err)
	}
	for k, vs := range q {
		if !slices.Contains(s3URLOptions, k) {
			return nil, fmt.Errorf("storage: store URL %q: unknown option %q (known: %s)", raw, k, strings.Join(s3URLOptions, ", "))
		}
		if len(vs) != 1 {
			return nil, fmt.Errorf("storage: store URL %q: option %q given %d times", raw, k, len(vs))
		}
	}
	loc := &S3Location{Bucket: bucket, Prefix: prefix, Options: q}
	if _, err := loc.settings(func(string) string { return "" }); err != nil {
		return nil, fmt.Errorf("storage: store URL %q: %w", raw, err)
	}
	return loc, nil
}

// checkBucketName applies the S3 bucket naming rules that matter here:
// 3 to 63 lower-case letters, digits, dots and hyphens, starting and
// ending with a letter or digit.
func checkBucketName(b string) error {
	if b == "" {
		return fmt.Errorf("no bucket (want s3://BUCKET/PREFIX)")
	}
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters long", b)
	}
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (c == '.' || c == '-') && i > 0 && i < len(b)-1
		if !ok {
			return fmt.Errorf("bucket name %q: only lower-case letters, digits, '.' and '-' (not first or last) are allowed", b)
		}
	}
	if strings.Contains(b, "..") {
		return fmt.Errorf("bucket name %q holds \"..\"", b)
	}
	return nil
}

// URL writes the location back as a store URL, options sorted.
func (l *S3Location) URL() string {
	u := "s3://" + l.Bucket
	if l.Prefix != "" {
		u += "/" + (&url.URL{Path: l.Prefix}).EscapedPath()
	}
	if len(l.Options) > 0 {
		u += "?" + l.Options.Encode()
	}
	return u
}

// base is the URL without options: the prefix of object URLs in errors.
func (l *S3Location) base() string {
	c := *l
	c.Options = nil
	return c.URL()
}

// key is the object key of name.
func (l *S3Location) key(name string) string {
	if l.Prefix == "" {
		return name
	}
	return l.Prefix + "/" + name
}

// s3Settings are where and how to reach the server, from the URL's
// options, then the environment, then the defaults.
type s3Settings struct {
	endpoint  string // host[:port]
	secure    bool
	pathStyle bool // false: let the client choose (virtual hosts on AWS)
	region    string
	retries   int  // attempts of one operation, at least 1
	aws       bool // the endpoint is AWS's (no endpoint configured)
}

// DefaultS3Retries is how many times one store operation is tried on
// transient errors (connection refused or reset, 5xx, throttling) before
// it fails; the waits between tries double from 250ms up to 5s, so the
// default rides out about 35 seconds of a server being away.
const DefaultS3Retries = 10

// settings resolves the location's options with getenv for the
// environment: TRIGRID_S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL
// (an endpoint is host:port, or an http:// or https:// URL, http meaning
// plain HTTP), TRIGRID_S3_INSECURE, TRIGRID_S3_STYLE (path or virtual),
// AWS_REGION, AWS_DEFAULT_REGION and TRIGRID_S3_RETRIES.
func (l *S3Location) settings(getenv func(string) string) (*s3Settings, error) {
	opt := func(key string, envs ...string) (string, string) {
		if v := l.Options.Get(key); v != "" {
			return v, "option " + key
		}
		for _, e := range envs {
			if v := getenv(e); v != "" {
				return v, e
			}
		}
		return "", ""
	}
	s := &s3Settings{secure: true, retries: DefaultS3Retries}
	ep, from := opt("endpoint", "TRIGRID_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	if ep == "" {
		s.endpoint, s.aws = "s3.amazonaws.com", true
	} else {
		host := ep
		if sch, h, ok := strings.Cut(ep, "://"); ok {
			switch strings.ToLower(sch) {
			case "http":
				s.secure = false
			case "https":
			default:
				return nil, fmt.Errorf("%s: endpoint %q: want HOST:PORT or an http:// or https:// URL", from, ep)
			}
			host = strings.TrimSuffix(h, "/")
		}
		if host == "" || strings.ContainsAny(host, "/?#@ ") {
			return nil, fmt.Errorf("%s: endpoint %q: want HOST:PORT or an http:// or https:// URL", from, ep)
		}
		s.endpoint = host
	}
	if v, from := opt("insecure", "TRIGRID_S3_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a boolean (1 or 0)", from, v)
		}
		if b {
			s.secure = false
		}
	}
	if v, from := opt("style", "TRIGRID_S3_STYLE"); v != "" {
		switch v {
		case "path":
			s.pathStyle = true
		case "virtual":
		default:
			return nil, fmt.Errorf("%s: style %q: want path or virtual", from, v)
		}
	} else if !s.aws {
		// S3-compatible servers are addressed by path unless told.
		s.pathStyle = true
	}
	s.region, _ = opt("region", "AWS_REGION", "AWS_DEFAULT_REGION")
	if s.region == "" && !s.aws {
		s.region = "us-east-1"
	}
	if v, from := opt("retries", "TRIGRID_S3_RETRIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("%s: retries %q: want a number of attempts from 1 to 100", from, v)
		}
		s.retries = n
	}
	return s, nil
}

// envSettings resolves with the process's environment.
func (l *S3Location) envSettings() (*s3Settings, error) { return l.settings(os.Getenv) }
