package kernels

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph"
)

func TestNewCPU(t *testing.T) {
	want := []string{"auto", "hash", "hashcol", "merge", "local", "reference"}
	if got := CPUKernelNames(); !slices.Equal(got, want) {
		t.Fatalf("CPUKernelNames() = %v, want %v", got, want)
	}
	for _, name := range want {
		c, err := NewCPU(name, CPUOptions{})
		if err != nil {
			t.Fatalf("NewCPU(%q): %v", name, err)
		}
		if c.Name() != name {
			t.Errorf("NewCPU(%q).Name() = %q", name, c.Name())
		}
	}
	_, err := NewCPU("bogus", CPUOptions{})
	if err == nil || !strings.Contains(err.Error(), "hashcol, merge") {
		t.Fatalf("NewCPU(bogus) error = %v, want one listing the valid names", err)
	}
}

// TestMalformed feeds broken views: every kernel must return an error,
// never a count, and never panic.
func TestMalformed(t *testing.T) {
	good := func() *graph.CSR { return forward(5, clique(5)) }
	tests := []struct {
		name string
		st   func() Subtask
	}{
		{"nil view", func() Subtask { return Subtask{IJ: good(), IK: nil, JK: good()} }},
		{"last offset", func() Subtask { g := good(); g.Offsets[len(g.Offsets)-1]--; return Whole(g) }},
		{"first offset", func() Subtask { g := good(); g.Offsets[0] = 1; return Whole(g) }},
		{"cols without offsets", func() Subtask { return Whole(&graph.CSR{Cols: []uint32{1}}) }},
		{"IJ columns past JK rows", func() Subtask {
			ij := good()
			ij.NCols = 9
			return Subtask{IJ: ij, IK: good(), JK: good()}
		}},
		{"IK shorter than IJ", func() Subtask {
			ik := csrOf(2, 5, [][2]uint32{{0, 1}})
			return Subtask{IJ: good(), IK: ik, JK: good()}
		}},
		// The two below pass the O(1) checks and fault inside the loop.
		{"column past JK rows", func() Subtask {
			ij := good()
			ij.Cols[len(ij.Cols)-1] = 1 << 30
			return Subtask{IJ: ij, IK: good(), JK: good()}
		}},
		{"column past NCols", func() Subtask {
			g := good()
			g.Cols[0] = 1<<32 - 1
			return Whole(g)
		}},
		{"offsets decrease", func() Subtask {
			g := good()
			g.Offsets[2], g.Offsets[3] = g.Offsets[3], g.Offsets[2]
			return Whole(g)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, name := range CPUKernelNames() {
				c, _ := NewCPU(name, CPUOptions{Workers: 2})
				res, err := c.Count(context.Background(), tt.st())
				if err == nil {
					t.Errorf("%s: no error, count %d", name, res.Triangles)
				}
			}
		})
	}
}

// checkLimitedContext is cancelled after its Err has been asked n times:
// a deterministic way to cancel a count between two chunks.
type checkLimitedContext struct {
	context.Context
	left atomic.Int64
}

func (c *checkLimitedContext) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestCancel(t *testing.T) {
	g := rmat(12, 8)
	want := mustReference(t, Whole(g))
	for _, name := range CPUKernelNames() {
		t.Run(name, func(t *testing.T) {
			c, _ := NewCPU(name, CPUOptions{Workers: 2})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := c.Count(ctx, Whole(g)); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled before start: error %v, want context.Canceled", err)
			}
			if name == "reference" {
				return // checks ctx only before it starts
			}
			mid := &checkLimitedContext{Context: context.Background()}
			mid.left.Store(3)
			if _, err := c.Count(mid, Whole(g)); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled between chunks: error %v, want context.Canceled", err)
			}
			// A cancelled count must leave the counter's scratch usable.
			if got := countWith(t, c, Whole(g)); got != want {
				t.Fatalf("after cancel: %d, reference %d", got, want)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	g := rmat(12, 8)
	for _, name := range []string{"auto", "hash", "hashcol", "merge"} {
		t.Run(name, func(t *testing.T) {
			var calls, lastDone, lastTotal int64
			var inCall atomic.Int32
			c, _ := NewCPU(name, CPUOptions{Workers: 3, Progress: func(done, total int64) {
				if inCall.Add(1) != 1 {
					t.Error("concurrent Progress calls")
				}
				time.Sleep(time.Millisecond)
				calls++
				lastDone, lastTotal = done, total
				inCall.Add(-1)
			}})
			countWith(t, c, Whole(g))
			if calls == 0 || lastDone != g.NumEdges() || lastTotal != g.NumEdges() {
				t.Fatalf("%d calls, last (%d, %d), want the final call (%d, %d)",
					calls, lastDone, lastTotal, g.NumEdges(), g.NumEdges())
			}
		})
	}
}

func TestResultKernelTime(t *testing.T) {
	g := rmat(12, 8)
	for _, name := range CPUKernelNames() {
		c, _ := NewCPU(name, CPUOptions{})
		res, err := c.Count(context.Background(), Whole(g))
		if err != nil {
			t.Fatal(err)
		}
		if res.KernelTime <= 0 {
			t.Errorf("%s: KernelTime = %v, want > 0", name, res.KernelTime)
		}
	}
}
