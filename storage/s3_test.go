package storage_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/trigrid/trigrid/internal/tests3"
	"github.com/trigrid/trigrid/storage"
)

// These run against a real S3 server (tests3: SeaweedFS on 127.0.0.1),
// as long tests.

func TestS3StoreAgainstServer(t *testing.T) {
	srv := tests3.Start(t, "trigrid-test")
	srv.Env(t)
	ctx := t.Context()
	s, err := storage.Open("s3://trigrid-test/runs/a")
	if err != nil {
		t.Fatal(err)
	}
	if names, err := s.List(ctx); err != nil || len(names) != 0 {
		t.Fatalf("new prefix lists %v, %v", names, err)
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB: a multipart upload
	files := map[string][]byte{"shard-0000-0000.tgs": []byte("one"), "b": {}, "manifest.json": big}
	for n, d := range files {
		if err := s.Put(ctx, n, d); err != nil {
			t.Fatal(err)
		}
	}
	// A deeper key and a sibling prefix are not files of this store.
	c := srv.Client()
	for _, k := range []string{"runs/a/sub/x", "runs/ab", "runs/b/c"} {
		if _, err := c.PutObject(ctx, "trigrid-test", k, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	names, err := s.List(ctx)
	if err != nil || strings.Join(names, ",") != "b,manifest.json,shard-0000-0000.tgs" {
		t.Fatalf("List %v, %v", names, err)
	}
	for n, d := range files {
		got, err := s.Get(ctx, n)
		if err != nil || !bytes.Equal(got, d) {
			t.Fatalf("Get %s: %d bytes, %v; want %d", n, len(got), err, len(d))
		}
		if size, err := s.Stat(ctx, n); err != nil || size != int64(len(d)) {
			t.Fatalf("Stat %s: %d, %v", n, size, err)
		}
	}
	if err := s.Put(ctx, "b", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "b"); string(got) != "new" {
		t.Fatalf("overwritten b reads %q", got)
	}
	_, err = s.Get(ctx, "nope")
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "s3://trigrid-test/runs/a/nope") {
		t.Fatalf("missing object: %v", err)
	}
	if _, err := s.Stat(ctx, "nope"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stat of a missing object: %v", err)
	}
	rm := s.(storage.Remover)
	if err := rm.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := rm.Remove(ctx, "b"); err != nil {
		t.Fatalf("removing a removed object: %v", err)
	}
	if names, _ := s.List(ctx); strings.Join(names, ",") != "manifest.json,shard-0000-0000.tgs" {
		t.Fatalf("after Remove: %v", names)
	}

	t.Run("missing bucket", func(t *testing.T) {
		s, err := storage.Open("s3://no-such-bucket/p")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range []func() error{
			func() error { _, err := s.List(ctx); return err },
			func() error { return s.Put(ctx, "x", []byte("x")) },
			func() error { _, err := s.Get(ctx, "x"); return err },
		} {
			err := op()
			if !errors.Is(err, storage.ErrNoBucket) || !strings.Contains(err.Error(), "s3://no-such-bucket/p: bucket no-such-bucket does not exist") {
				t.Errorf("error %v", err)
			}
		}
	})

	t.Run("bad credentials", func(t *testing.T) {
		for _, env := range [][2]string{{"AWS_ACCESS_KEY_ID", "nobody"}, {"AWS_SECRET_ACCESS_KEY", "wrong-secret-wrong-secret-wrong"}} {
			t.Setenv(env[0], env[1])
			s, err := storage.Open("s3://trigrid-test/runs/a")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = s.Get(ctx, "manifest.json")
			if !errors.Is(err, storage.ErrAccessDenied) || !strings.Contains(err.Error(), "access denied") || !strings.Contains(err.Error(), "check AWS_ACCESS_KEY_ID") {
				t.Errorf("%s=%s: %v", env[0], env[1], err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("refused credentials were retried for %v", d)
			}
			if _, err := s.List(ctx); !errors.Is(err, storage.ErrAccessDenied) {
				t.Errorf("List with %s=%s: %v", env[0], env[1], err)
			}
			srv.Env(t)
		}
	})

	t.Run("unreachable endpoint", func(t *testing.T) {
		// The server's own bucket and identity, at a host name that does
		// not resolve, and at its address as an https endpoint (it speaks
		// plain HTTP): both fail at once, neither is retried.
		for _, c := range []struct{ endpoint, why string }{
			{"http://" + badHost + ":" + strings.Split(srv.Endpoint, ":")[1], "does not resolve"},
			{"https://" + srv.Endpoint, "does not speak TLS"},
		} {
			t.Setenv("TRIGRID_S3_ENDPOINT", c.endpoint)
			s, err := storage.Open("s3://trigrid-test/runs/a")
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Get(ctx, "manifest.json")
			if c.why == "does not resolve" {
				var dns *net.DNSError
				if _, lerr := net.LookupHost(badHost); !errors.As(lerr, &dns) || !dns.IsNotFound {
					t.Logf("this machine's resolver does not answer that %s does not exist (%v)", badHost, lerr)
					continue
				}
			}
			if !errors.Is(err, storage.ErrUnreachable) || !strings.Contains(err.Error(), c.why) ||
				!strings.Contains(err.Error(), "bucket trigrid-test") || strings.Contains(err.Error(), "gave up after") {
				t.Errorf("%s: %v, want an unreachable endpoint, not retried", c.endpoint, err)
			}
		}
		srv.Env(t)
	})

	t.Run("server restart", func(t *testing.T) { checkS3Restart(t, srv, big) })
}

// checkS3Restart: a Get retries across a restart of srv and then reads big
// (manifest.json of runs/a), and with the server away it gives up after
// the configured tries with an error that names the object.
func checkS3Restart(t *testing.T, srv *tests3.Server, big []byte) {
	ctx := t.Context()
	// The server goes down; a Get started meanwhile retries until it
	// is back and then reads the object. More tries than the default,
	// for a loaded machine where the server takes long to start.
	t.Setenv("TRIGRID_S3_RETRIES", "25")
	s, err := storage.Open("s3://trigrid-test/runs/a")
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	type res struct {
		data []byte
		err  error
	}
	got := make(chan res, 1)
	go func() {
		d, err := s.Get(ctx, "manifest.json")
		got <- res{d, err}
	}()
	time.Sleep(2 * time.Second)
	restarted := make(chan error, 1)
	go func() { restarted <- srv.Restart(0) }()
	var r res
	select {
	case r = <-got:
	case <-time.After(2 * time.Minute):
		t.Fatal("Get did not return")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if r.err != nil || !bytes.Equal(r.data, big) {
		t.Fatalf("Get across a restart: %d bytes, %v", len(r.data), r.err)
	}
	// Retries are bounded: with the server away, a few tries, then an
	// error that says so.
	t.Setenv("TRIGRID_S3_RETRIES", "3")
	s3, err := storage.Open("s3://trigrid-test/runs/a")
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	_, err = s3.Get(context.Background(), "manifest.json")
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 tries") || !strings.Contains(err.Error(), "s3://trigrid-test/runs/a/manifest.json") {
		t.Fatalf("Get with the server down: %v", err)
	}
	if err := srv.Restart(0); err != nil {
		t.Fatal(err)
	}
}
