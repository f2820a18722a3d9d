package counts

import (
	"context"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
)

// TestBlocksRejectsMalformedPartials: a partial whose shape does not fit
// the layout or blocks is an error naming the subtask, and adds nothing.
func TestBlocksRejectsMalformedPartials(t *testing.T) {
	l, err := partition.NewHashLayout(6, 2) // groups {0,2,4} and {1,3,5}
	if err != nil {
		t.Fatal(err)
	}
	edges := func(i, j int) int64 { return int64(i + j + 1) }
	b := NewBlocks(l, 6, edges, true)
	ok := func() *api.Partial {
		return &api.Partial{VI: []uint64{1, 0, 0}, VJ: []uint64{0, 1, 0}, VK: []uint64{0, 0, 1},
			EIJ: make([]uint64, 2), EIK: make([]uint64, 2), EJK: make([]uint64, 3)}
	}
	for _, c := range []struct {
		name    string
		i, j, k int
		p       *api.Partial
	}{
		{"outside P", 0, 1, 2, ok()},
		{"nil", 0, 1, 1, nil},
		{"long VI", 0, 1, 1, func() *api.Partial { p := ok(); p.VI = make([]uint64, 4); return p }()},
		{"short EIK", 0, 1, 1, func() *api.Partial { p := ok(); p.EIK = p.EIK[:1]; return p }()},
	} {
		err := b.Add(c.i, c.j, c.k, c.p)
		if err == nil || !strings.Contains(err.Error(), "subtask") {
			t.Errorf("%s: error %v, want one naming the subtask", c.name, err)
		}
	}
	if err := b.Add(0, 1, 1, ok()); err != nil {
		t.Fatal(err)
	}
	c, err := b.Counts(context.Background(), []uint64{10, 11, 12, 13, 14, 15}, func(int, int) int64 { return 0 },
		func(context.Context, int, int) (*graph.CSR, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	// VI local 0 of group 0 is vertex 0; VJ local 1 of group 1 is 3; VK
	// local 2 of group 1 is 5.
	if want := []uint64{1, 0, 0, 1, 0, 1}; !equal(c.Triangles, want) {
		t.Fatalf("sums %v, want %v", c.Triangles, want)
	}
	if err := b.Remove(0, 1, 1, ok()); err != nil {
		t.Fatal(err)
	}
	if want := make([]uint64, 6); !equal(c.Triangles, want) {
		t.Fatalf("after removal %v, want zeros", c.Triangles)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
