package partition

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/internal/atomicfile"
	"github.com/trigrid/trigrid/storage"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range ents {
		s = append(s, e.Name())
	}
	return s
}

// partitionInto partitions path into dir through OpenOutput with P and
// ctx, committing on success.
func partitionInto(ctx context.Context, t *testing.T, path, dir string, p int, replace bool) error {
	t.Helper()
	o, err := OpenOutput(context.Background(), dir, replace, "test", nil)
	if err != nil {
		return err
	}
	defer o.Abort()
	if _, err := PartitionFile(ctx, path, edgeio.ReadOptions{}, o.Store, Config{Scheme: storage.SchemeHash, P: p, Workers: 2}); err != nil {
		return err
	}
	return o.Commit(ctx)
}

// TestOpenOutputReplace: a replacing run that fails or is cancelled leaves
// the old partitioning counting exactly and nothing beside it; one that
// succeeds swaps the new one in (in one step, and by two renames where the
// system has no exchange), keeping the directory's mode.
func TestOpenOutputReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.bin")
	edges := rmatEdges(10, 8, 4)
	if err := edgeio.WriteFile(path, edges, edgeio.WriteOptions{Format: edgeio.FormatBin}); err != nil {
		t.Fatal(err)
	}
	want := bruteCount(refForward(edges))
	for _, twoRenames := range []bool{false, true} {
		t.Run(fmt.Sprintf("two-renames=%v", twoRenames), func(t *testing.T) {
			if twoRenames {
				exchange = func(a, b string) error { return errors.ErrUnsupported }
				defer func() { exchange = atomicfile.Exchange }()
			}
			parent := t.TempDir()
			dir := filepath.Join(parent, "new", "out")
			ctx := context.Background()
			if err := partitionInto(ctx, t, path, dir, 2, false); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			check := func(p int) {
				t.Helper()
				store, _ := storage.Open(dir)
				m, err := storage.ReadManifest(ctx, store)
				if err != nil || m.P != p {
					t.Fatalf("manifest %v, want P %d", err, p)
				}
				if got := countStore(t, store); got != want {
					t.Fatalf("count %d, want %d", got, want)
				}
				if left := listDir(t, filepath.Join(parent, "new")); !slices.Equal(left, []string{"out"}) {
					t.Fatalf("beside the output: %v", left)
				}
			}
			if err := partitionInto(ctx, t, path, dir, 4, false); !errors.Is(err, ErrOutputNotEmpty) {
				t.Fatalf("without replace: %v", err)
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if err := partitionInto(cctx, t, path, dir, 4, true); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled: %v", err)
			}
			check(2)
			if err := partitionInto(ctx, t, filepath.Join(parent, "missing.txt"), dir, 4, true); err == nil {
				t.Fatal("a missing input: no error")
			}
			check(2)
			if err := partitionInto(ctx, t, path, dir, 4, true); err != nil {
				t.Fatal(err)
			}
			check(4)
			if fi, err := os.Stat(dir); runtime.GOOS != "windows" && (err != nil || fi.Mode().Perm() != 0o750) {
				t.Fatalf("replaced directory: mode %v (%v), want its old 0750", fi.Mode(), err)
			}
		})
	}
}

// TestOpenOutputLocked: while one OpenOutput holds a directory, others
// (goroutines here: flock locks an open file, so opens in one process
// conflict as those of two processes do) fail at once naming the holder;
// once it is released the directory can be opened again.
func TestOpenOutputLocked(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no file locking")
	}
	dir := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	const runs = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []*Output
		errs []error
	)
	for k := range runs {
		wg.Go(func() {
			o, err := OpenOutput(ctx, dir, true, fmt.Sprintf("run %d", k), nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			won = append(won, o)
		})
	}
	wg.Wait()
	if len(won) != 1 {
		t.Fatalf("%d of %d runs took the directory", len(won), runs)
	}
	for _, err := range errs {
		if !errors.Is(err, atomicfile.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Fatalf("refused run: %v", err)
		}
	}
	won[0].Abort()
	o, err := OpenOutput(ctx, dir, false, "after", nil)
	if err != nil {
		t.Fatalf("after the holder aborted: %v", err)
	}
	o.Abort()
	if left := listDir(t, filepath.Dir(dir)); len(left) != 0 {
		t.Fatalf("aborted runs left %v", left)
	}
}

// TestOpenOutputSweepsKilledRuns: the directory a killed run left beside
// the output is removed by the next run into it, as far as it holds a
// partitioning's files; its lock file is taken over.
func TestOpenOutputSweepsKilledRuns(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	killed := filepath.Join(parent, ".out.trigrid-new-abc")
	foreign := filepath.Join(parent, ".out.trigrid-new-def")
	other := filepath.Join(parent, ".other.trigrid-new-abc")
	for _, d := range []string{killed, foreign, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, storage.ShardName(0, 1)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(parent, ".out.trigrid-lock"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := OpenOutput(context.Background(), dir, false, "next", nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Abort()
	if got := listDir(t, parent); !slices.Equal(got, []string{".other.trigrid-new-abc", ".out.trigrid-new-def"}) {
		t.Fatalf("after the next run: %v", got)
	}
	if got := listDir(t, foreign); !slices.Equal(got, []string{"notes.txt"}) {
		t.Fatalf("a foreign file's directory: %v", got)
	}
}
