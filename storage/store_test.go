package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func stores(t *testing.T) map[string]Store {
	t.Helper()
	fs, err := Open("file://" + t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Store{"file": fs, "mem": NewMemStore()}
}

func TestStoreContract(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if got, err := s.List(ctx); err != nil || len(got) != 0 {
				t.Fatalf("List of a new store = %v, %v", got, err)
			}
			if _, err := s.Get(ctx, "nope"); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope") {
				t.Fatalf("Get missing: %v, want os.ErrNotExist naming the file", err)
			}
			if _, err := s.Stat(ctx, "nope"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Stat missing: %v", err)
			}
			buf := []byte("hello")
			if err := s.Put(ctx, "b.tgs", buf); err != nil {
				t.Fatal(err)
			}
			buf[0] = 'j' // the store must hold its own copy
			if err := s.Put(ctx, "a.tgs", nil); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "b.tgs")
			if err != nil || string(got) != "hello" {
				t.Fatalf("Get = %q, %v", got, err)
			}
			got[0] = 'y'
			if again, _ := s.Get(ctx, "b.tgs"); string(again) != "hello" {
				t.Fatalf("Get returned the stored buffer itself")
			}
			if n, err := s.Stat(ctx, "b.tgs"); err != nil || n != 5 {
				t.Fatalf("Stat = %d, %v", n, err)
			}
			if err := s.Put(ctx, "b.tgs", []byte("bye")); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(ctx, "b.tgs"); string(got) != "bye" {
				t.Fatalf("after overwrite Get = %q", got)
			}
			if names, err := s.List(ctx); err != nil || !slices.Equal(names, []string{"a.tgs", "b.tgs"}) {
				t.Fatalf("List = %v, %v", names, err)
			}
			for _, bad := range []string{"", "..", "a/b", `a\b`, "../x", "x..y", ".tmp-x", "a\x00b"} {
				if err := s.Put(ctx, bad, nil); err == nil {
					t.Errorf("Put(%q) accepted", bad)
				}
				if _, err := s.Get(ctx, bad); err == nil {
					t.Errorf("Get(%q) accepted", bad)
				}
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := s.Put(cctx, "c", nil); !errors.Is(err, context.Canceled) {
				t.Errorf("Put with a cancelled context: %v", err)
			}
		})
	}
}

func TestStoreConcurrent(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range 10 {
						n := ShardName(w, k)
						if err := s.Put(ctx, n, []byte(n)); err != nil {
							t.Error(err)
							return
						}
						if got, err := s.Get(ctx, n); err != nil || string(got) != n {
							t.Errorf("Get(%s) = %q, %v", n, got, err)
						}
					}
				}()
			}
			wg.Wait()
			if names, _ := s.List(ctx); len(names) != 40 {
				t.Fatalf("List has %d names, want 40", len(names))
			}
		})
	}
}

func TestFileStoreAtomicNoTemps(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "sub", "dir") // created by Put
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 5 {
		if err := s.Put(ctx, "m.json", []byte(strings.Repeat("x", k*1000))); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "m.json" {
		t.Fatalf("directory holds %v, want only m.json", ents)
	}
	// A crashed Put leaves a temporary file; List must not show it.
	if err := os.WriteFile(filepath.Join(dir, tempPrefix+"x-123"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	if names, _ := s.List(ctx); !slices.Equal(names, []string{"m.json"}) {
		t.Fatalf("List = %v", names)
	}
	// A failed Put (directory gone read-only is not portable; use a name
	// that is a directory) must leave no temporary behind.
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "d", []byte("x")); err == nil {
		t.Fatal("Put over a directory succeeded")
	}
	ents, _ = os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) && e.Name() != tempPrefix+"x-123" {
			t.Fatalf("failed Put left %s behind", e.Name())
		}
	}
}

func TestOpen(t *testing.T) {
	abs := t.TempDir()
	tests := []struct {
		url, wantURL, wantErr string
	}{
		{url: "file://" + abs, wantURL: "file://" + abs},
		{url: abs, wantURL: "file://" + abs},
		{url: "mem://shared", wantURL: "mem://shared"},
		{url: "s3://bucket/x", wantURL: "s3://bucket/x"},
		{url: "gs://bucket/x", wantErr: `unsupported store URL scheme "gs" in "gs://bucket/x" (supported: file://, mem://, s3://, or a plain path)`},
		{url: "", wantErr: "empty store URL"},
		{url: "file://", wantErr: "names no directory"},
		{url: "mem://", wantErr: "needs a name"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			s, err := Open(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.URL() != tc.wantURL {
				t.Fatalf("URL = %q, want %q", s.URL(), tc.wantURL)
			}
		})
	}
	t.Run("relative", func(t *testing.T) {
		s, err := Open("file://rel/dir")
		if err != nil {
			t.Fatal(err)
		}
		wd, _ := os.Getwd()
		if want := "file://" + filepath.Join(wd, "rel", "dir"); s.URL() != want {
			t.Fatalf("URL = %q, want %q", s.URL(), want)
		}
	})
	t.Run("mem shares by name", func(t *testing.T) {
		a, _ := Open("mem://same-" + t.Name())
		b, _ := Open("mem://same-" + t.Name())
		if err := a.Put(context.Background(), "x", []byte("1")); err != nil {
			t.Fatal(err)
		}
		if got, err := b.Get(context.Background(), "x"); err != nil || string(got) != "1" {
			t.Fatalf("second Open does not see the first's file: %q, %v", got, err)
		}
	})
}
