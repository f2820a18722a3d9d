package storage

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Errors of s3:// stores that a caller may test with errors.Is.
var (
	// ErrNoBucket: the bucket of an s3:// store does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrAccessDenied: the server refused the credentials or the request.
	ErrAccessDenied = errors.New("access denied")
	// ErrUnreachable: the endpoint cannot be reached however often it is
	// tried (its host name does not resolve, or TLS cannot agree).
	ErrUnreachable = errors.New("S3 endpoint unreachable")
)

// s3Store keeps the files of a partitioning as the objects PREFIX/NAME of
// one bucket. S3 writes an object whole or not at all, so Put is atomic
// as the Store interface wants; shards are immutable once written and
// the manifest, written last, is what makes a partitioning visible.
type s3Store struct {
	loc *S3Location
	set *s3Settings
	c   *minio.Client
	// backoff is the first wait between tries; it doubles up to
	// maxBackoff.
	backoff, maxBackoff time.Duration
	// bucketSeen is set once the bucket was found to exist.
	bucketSeen atomic.Bool
}

// checkBucket makes sure the bucket exists before a write or a listing:
// some servers create a bucket on its first write, and list a missing
// one as empty, which would hide a misspelt bucket.
func (s *s3Store) checkBucket(ctx context.Context) error {
	if s.bucketSeen.Load() {
		return nil
	}
	var ok bool
	err := s.do(ctx, "find bucket of", s.loc.base(), func(ctx context.Context) error {
		var err error
		ok, err = s.c.BucketExists(ctx, s.loc.Bucket)
		return err
	})
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("storage: %w", s.explain1(minio.ErrorResponse{Code: "NoSuchBucket"}))
	}
	s.bucketSeen.Store(true)
	return nil
}

// newS3Store opens an s3:// URL; nothing is contacted until the first
// operation.
func newS3Store(raw string) (*s3Store, error) {
	loc, err := ParseS3URL(raw)
	if err != nil {
		return nil, err
	}
	set, err := loc.envSettings()
	if err != nil {
		return nil, fmt.Errorf("storage: %s: %w", loc.base(), err)
	}
	// Credentials: the AWS variables (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), then the AWS credentials
	// file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile
	// AWS_PROFILE), then on AWS the instance or pod role. None at all
	// means anonymous requests, which a public bucket may allow.
	providers := []credentials.Provider{&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}}
	if set.aws {
		providers = append(providers, &credentials.IAM{})
	}
	lookup := minio.BucketLookupAuto
	if set.pathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(set.endpoint, &minio.Options{
		Creds:        credentials.NewChainCredentials(providers),
		Secure:       set.secure,
		Region:       set.region,
		BucketLookup: lookup,
		// The store retries itself (do), with longer waits than the
		// client's own, so that a server restart is ridden out.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("storage: %s: %w", loc.base(), err)
	}
	return &s3Store{loc: loc, set: set, c: c, backoff: 250 * time.Millisecond, maxBackoff: 5 * time.Second}, nil
}

func (s *s3Store) URL() string { return s.loc.URL() }

// ObjectURL is the s3:// URL of name's object, for errors.
func (s *s3Store) ObjectURL(name string) string { return s.loc.base() + "/" + name }

// do runs op until it succeeds, fails for good or has been tried
// s.set.retries times, waiting between tries. what and where word the
// error.
func (s *s3Store) do(ctx context.Context, what, where string, op func(context.Context) error) error {
	wait := s.backoff
	start := time.Now()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !transient(err) {
			return s.explain(what, where, err)
		}
		if attempt >= s.set.retries {
			return fmt.Errorf("storage: %s %s: gave up after %d tries in %v: %w", what, where, attempt, time.Since(start).Round(time.Millisecond), s.explain1(err))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, s.maxBackoff)
	}
}

// transient says whether err may go away on its own: a network failure
// (the server is restarting, a connection was reset), a 5xx, throttling.
// A host name that does not resolve and TLS that cannot agree are not
// (unreachable).
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if _, ok := unreachable(err); ok {
		return false
	}
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout", "Throttling", "ThrottlingException":
		return true
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
		"NoSuchBucket", "NoSuchKey", "InvalidBucketName", "InvalidArgument":
		return false
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	if resp.StatusCode != 0 {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &oe), errors.As(err, &ne):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true
	}
	// A response the client could not parse (a server going down
	// mid-reply) has no code either.
	return resp.Code == ""
}

// unreachable says why err shows that the endpoint cannot be reached
// however often it is tried: its host name does not resolve (the DNS
// answer is final, unlike a DNS timeout), or TLS cannot agree with it (an
// unknown authority, a certificate for another name, an expired one, a
// plain-HTTP server at an https endpoint, a refused handshake).
func unreachable(err error) (string, bool) {
	var (
		dns  *net.DNSError
		ua   x509.UnknownAuthorityError
		host x509.HostnameError
		inv  x509.CertificateInvalidError
		cv   *tls.CertificateVerificationError
		rh   tls.RecordHeaderError
		al   tls.AlertError
	)
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("host name %s does not resolve", dns.Name), true
	case errors.As(err, &ua), errors.As(err, &host), errors.As(err, &inv), errors.As(err, &cv):
		return "its TLS certificate is not trusted", true
	case errors.As(err, &rh), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "it does not speak TLS (a plain-HTTP endpoint is named http://HOST:PORT)", true
	case errors.As(err, &al):
		return "it refused the TLS handshake", true
	}
	return "", false
}

// explain words a final error: a missing bucket or object, and refused
// credentials, in words an operator can act on.
func (s *s3Store) explain(what, where string, err error) error {
	return fmt.Errorf("storage: %s %s: %w", what, where, s.explain1(err))
}

func (s *s3Store) explain1(err error) error {
	resp := minio.ToErrorResponse(err)
	switch resp.Code {
	case "NoSuchBucket":
		return fmt.Errorf("%s: bucket %s does not exist (create it first): %w", s.loc.base(), s.loc.Bucket, ErrNoBucket)
	case "NoSuchKey":
		return fmt.Errorf("no such object: %w", os.ErrNotExist)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken":
		return fmt.Errorf("%w (%s: %s): check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (or the profile of the AWS credentials file) and that they may use bucket %s at %s",
			ErrAccessDenied, resp.Code, strings.TrimSpace(resp.Message), s.loc.Bucket, s.set.endpoint)
	}
	if why, ok := unreachable(err); ok {
		return fmt.Errorf("%w: endpoint %s of bucket %s: %s (check the endpoint: the URL's endpoint option, TRIGRID_S3_ENDPOINT, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL): %w",
			ErrUnreachable, s.set.endpoint, s.loc.Bucket, why, err)
	}
	return err
}

func (s *s3Store) Put(ctx context.Context, name string, data []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := s.checkBucket(ctx); err != nil {
		return err
	}
	return s.do(ctx, "put", s.ObjectURL(name), func(ctx context.Context) error {
		_, err := s.c.PutObject(ctx, s.loc.Bucket, s.loc.key(name), bytes.NewReader(data), int64(len(data)),
			minio.PutObjectOptions{ContentType: "application/octet-stream", SendContentMd5: true})
		return err
	})
}

func (s *s3Store) Get(ctx context.Context, name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var data []byte
	err := s.do(ctx, "get", s.ObjectURL(name), func(ctx context.Context) error {
		obj, err := s.c.GetObject(ctx, s.loc.Bucket, s.loc.key(name), minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer obj.Close()
		st, err := obj.Stat()
		if err != nil {
			return err
		}
		buf := bytes.NewBuffer(make([]byte, 0, max(st.Size, 0)+bytes.MinRead))
		if _, err := buf.ReadFrom(obj); err != nil {
			return err
		}
		if int64(buf.Len()) != st.Size {
			return fmt.Errorf("read %d of the object's %d bytes: %w", buf.Len(), st.Size, io.ErrUnexpectedEOF)
		}
		data = buf.Bytes()
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		// A missing object of a missing bucket is the bucket's error.
		if berr := s.checkBucket(ctx); berr != nil {
			return nil, berr
		}
	}
	return data, err
}

func (s *s3Store) Stat(ctx context.Context, name string) (int64, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	var size int64
	err := s.do(ctx, "stat", s.ObjectURL(name), func(ctx context.Context) error {
		st, err := s.c.StatObject(ctx, s.loc.Bucket, s.loc.key(name), minio.StatObjectOptions{})
		if err != nil {
			return err
		}
		size = st.Size
		return nil
	})
	return size, err
}

// List returns the names of the objects directly under the prefix;
// deeper keys (PREFIX/a/b) are not files of this store. A missing bucket
// is an error, not an empty store.
func (s *s3Store) List(ctx context.Context) ([]string, error) {
	if err := s.checkBucket(ctx); err != nil {
		return nil, err
	}
	var names []string
	dir := ""
	if s.loc.Prefix != "" {
		dir = s.loc.Prefix + "/"
	}
	err := s.do(ctx, "list", s.loc.base(), func(ctx context.Context) error {
		names = names[:0]
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for obj := range s.c.ListObjects(ctx, s.loc.Bucket, minio.ListObjectsOptions{Prefix: dir}) {
			if obj.Err != nil {
				return obj.Err
			}
			n := strings.TrimPrefix(obj.Key, dir)
			if n == "" || strings.Contains(n, "/") {
				continue
			}
			names = append(names, n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// Remove deletes name's object; a missing one is not an error.
func (s *s3Store) Remove(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return s.do(ctx, "remove", s.ObjectURL(name), func(ctx context.Context) error {
		return s.c.RemoveObject(ctx, s.loc.Bucket, s.loc.key(name), minio.RemoveObjectOptions{})
	})
}

// IsS3 reports whether s is an s3:// store.
func IsS3(s Store) bool {
	_, ok := s.(*s3Store)
	return ok
}
