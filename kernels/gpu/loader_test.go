package gpu

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

func TestSelectFallsBackToCPU(t *testing.T) {
	var logs bytes.Buffer
	opts := SelectOptions{Library: Options{Path: filepath.Join(t.TempDir(), "libnothere.so")},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	sel, err := Select("auto", "trix", opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sel.New()
	if err != nil {
		t.Fatal(err)
	}
	if sel.Device != "cpu" || sel.GPU != nil || c.Name() != "auto" {
		t.Errorf("fallback kernel = %q, want the CPU auto", c.Name())
	}
	if !strings.Contains(logs.String(), "counting on the CPU") {
		t.Errorf("no fallback reason logged: %q", logs.String())
	}
	g := forward(t, randomEdges(200, 2000, 1))
	r, err := c.Count(context.Background(), kernels.Whole(g))
	if err != nil {
		t.Fatal(err)
	}
	if want := mustReference(t, kernels.Whole(g)); r.Triangles != want {
		t.Fatalf("fallback counted %d, want %d", r.Triangles, want)
	}
	if _, err := Select("gpu", "trix", opts); !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Select(gpu) without a library = %v, want ErrNoLibrary", err)
	}
	if _, err := Select("gpu", "hash", opts); err == nil {
		t.Fatal("Select(gpu, hash) succeeded; hash is a CPU kernel")
	}
	if _, err := Select("tpu", "auto", opts); err == nil {
		t.Fatal("Select(tpu) succeeded")
	}
	if _, err := Select("cpu", "wetric", opts); err == nil {
		t.Fatal("Select(cpu, wetric) succeeded; wetric is a GPU kernel")
	}
	if _, err := Select("auto", "magic", opts); err == nil {
		t.Fatal("Select(auto, magic) succeeded")
	}
	if sel, err := Select("cpu", "hash", opts); err != nil || sel.Device != "cpu" {
		t.Fatalf("Select(cpu, hash) = %+v, %v", sel, err)
	}
}

func TestReferenceCounts(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]*graph.CSR{
		"random": forward(t, randomEdges(300, 3000, 2)),
		"hub":    forward(t, hubEdges(400)),
		"single": forward(t, []graph.Edge{{U: 0, V: 1}}),
	}
	for _, k := range Kernels() {
		c, err := lib.NewCounter(k)
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range graphs {
			want := mustReference(t, kernels.Whole(g))
			r, err := c.Count(context.Background(), kernels.Whole(g))
			if err != nil || r.Triangles != want {
				t.Errorf("%s/%s: %d, %v; want %d", k, name, r.Triangles, err, want)
			}
			for _, scheme := range []string{"hash", "range"} {
				var sum uint64
				for _, s := range partitioned(g, 3, scheme) {
					r, err := c.Count(context.Background(), s)
					if err != nil {
						t.Fatalf("%s/%s/%s: %v", k, name, scheme, err)
					}
					sum += r.Triangles
				}
				if sum != want {
					t.Errorf("%s/%s/%s P=3: %d, want %d", k, name, scheme, sum, want)
				}
			}
		}
		c.Close()
		c.Close()
	}
}

func TestSlotReuse(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.NewCounter("polak")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := forward(t, randomEdges(100, 800, 4))
	ts := partitioned(g, 2, "hash")
	for range 3 {
		for _, s := range ts {
			if _, err := c.Count(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if c.Uploads() != 4 {
		t.Fatalf("4 distinct blocks over 24 subtasks uploaded %d times, want 4", c.Uploads())
	}
}

func TestOutOfMemory(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good, MemLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.NewCounter("trix")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := forward(t, randomEdges(1000, 10000, 5))
	_, err = c.Count(context.Background(), kernels.Whole(g))
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("count over the limit = %v, want ErrOutOfMemory", err)
	}
}

func TestBadInput(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.NewCounter("nope"); !errors.Is(err, ErrUnknownKernel) {
		t.Fatalf("NewCounter(nope) = %v", err)
	}
	c, err := lib.NewCounter("grouptc")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bad := &graph.CSR{Offsets: []uint64{0, 2}, Cols: []uint32{1, 0}, NCols: 2}
	if _, err := c.Count(context.Background(), kernels.Whole(bad)); err == nil {
		t.Fatal("unsorted row accepted")
	}
	a := &graph.CSR{Offsets: []uint64{0, 1}, Cols: []uint32{0}, NCols: 1}
	b := &graph.CSR{Offsets: []uint64{0, 0, 0}, NCols: 1}
	if _, err := c.Count(context.Background(), kernels.Subtask{IJ: a, IK: a, JK: b}); err == nil {
		t.Fatal("index spaces that disagree accepted")
	}
}

func TestPreprocessReference(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	checkPreprocess(t, lib, randomEdges(500, 6000, 6))
	checkPreprocess(t, lib, hubEdges(300))
}

// checkPreprocess compares the library's forward graph with graph's CPU
// path on compact ids where every id has a non-loop edge.
func checkPreprocess(t *testing.T, lib *Library, edges []graph.Edge) {
	t.Helper()
	n := uint64(0)
	pairs := make([]uint32, 0, 2*len(edges))
	for _, e := range edges {
		pairs = append(pairs, uint32(e.U), uint32(e.V))
		n = max(n, e.U+1, e.V+1)
	}
	// Give every id a non-loop edge so that CPU compaction keeps ids.
	for v := uint64(1); v < n; v++ {
		pairs = append(pairs, uint32(v-1), uint32(v))
		edges = append(edges, graph.Edge{U: v - 1, V: v})
	}
	want := forward(t, edges)
	p, err := lib.Preprocess(pairs, n)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCSR(p.Forward, want) {
		t.Fatalf("preprocessed forward graph differs from the CPU one")
	}
	if p.Stats.Edges != uint64(want.NumEdges()) || p.Stats.InputPairs != uint64(len(pairs)/2) {
		t.Fatalf("stats %+v, want %d edges", p.Stats, want.NumEdges())
	}
}

func equalCSR(a, b *graph.CSR) bool {
	if a.NCols != b.NCols || len(a.Offsets) != len(b.Offsets) || len(a.Cols) != len(b.Cols) {
		return false
	}
	for i := range a.Offsets {
		if a.Offsets[i] != b.Offsets[i] {
			return false
		}
	}
	for i := range a.Cols {
		if a.Cols[i] != b.Cols[i] {
			return false
		}
	}
	return true
}

// lookupCount is a kernels.CacheCounter that counts.
type lookupCount struct{ hits, misses atomic.Int64 }

func (l *lookupCount) Lookup(hit bool) {
	if hit {
		l.hits.Add(1)
	} else {
		l.misses.Add(1)
	}
}

var _ kernels.CacheCounted = (*Counter)(nil)

// The device block cache reports one lookup per block a count needs: the
// misses are the uploads, the rest hits.
func TestSlotLookupsCounted(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.NewCounter("polak")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var l lookupCount
	c.SetCacheCounter(&l)
	g := forward(t, randomEdges(100, 800, 4))
	ts := partitioned(g, 2, "hash")
	for range 3 {
		for _, s := range ts {
			if _, err := c.Count(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := int64(3 * 3 * len(ts))
	if got := l.hits.Load() + l.misses.Load(); got != want {
		t.Errorf("%d lookups for %d counts of 3 blocks, want %d", got, 3*len(ts), want)
	}
	if m := l.misses.Load(); m != int64(c.Uploads()) || m != 4 {
		t.Errorf("%d misses, %d uploads: want 4 of each (4 distinct blocks)", m, c.Uploads())
	}
}
