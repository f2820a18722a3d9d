package coordinator

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// A partial file reads back as written (nil per-edge slices stay nil,
// empty ones empty) with the count it was saved with, and any damage, or
// reading it as another subtask's, is an error.
func TestPartialFile(t *testing.T) {
	for _, p := range []*api.Partial{
		{VI: []uint64{1, 2}, VJ: []uint64{}, VK: []uint64{3}},
		{VI: []uint64{1}, VJ: []uint64{2}, VK: []uint64{3}, EIJ: []uint64{}, EIK: []uint64{1 << 63}, EJK: []uint64{4, 5}},
	} {
		b := encodePartialFile("j-1", 7, 1<<40, p)
		n, got, err := decodePartialFile(b, "j-1", 7)
		if err != nil || n != 1<<40 || !reflect.DeepEqual(got, p) {
			t.Fatalf("got %d, %+v, %v; want %d, %+v", n, got, err, uint64(1<<40), p)
		}
		for i := range len(b) * 8 {
			bad := append([]byte(nil), b...)
			bad[i/8] ^= 1 << (i % 8)
			if _, _, err := decodePartialFile(bad, "j-1", 7); err == nil {
				t.Fatalf("bit %d flipped: no error", i)
			}
		}
		for n := range len(b) {
			if _, _, err := decodePartialFile(b[:n], "j-1", 7); err == nil {
				t.Fatalf("cut to %d bytes: no error", n)
			}
		}
		// Another subtask's or another job's file is refused.
		if _, _, err := decodePartialFile(b, "j-1", 6); err == nil {
			t.Fatal("subtask 7's partial read as subtask 6's")
		}
		if _, _, err := decodePartialFile(b, "j-2", 7); err == nil {
			t.Fatal("job j-1's partial read as job j-2's")
		}
	}
}

// A subtask settled twice (a recount overturned it) holds only the second
// partial in the sums; reopening takes it out; a partial of the wrong
// length is refused and leaves the sums as they were.
func TestJobSumsReplace(t *testing.T) {
	ctx := context.Background()
	store := storage.NewMemStore()
	m, err := testPartitioner{}.Partition(ctx, PartitionRequest{Graph: testGraph, Scheme: storage.SchemeHash, P: 2, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	tasks := partition.Subtasks(m)
	js, err := newJobSums(ctx, store, m, tasks, false)
	if err != nil {
		t.Fatal(err)
	}
	l, err := partition.ManifestLayout(m)
	if err != nil {
		t.Fatal(err)
	}
	sum := func() (total uint64, at map[uint32]uint64) {
		c, err := js.sums.Counts(ctx, js.ids, manifestEdges(m), func(ctx context.Context, i, j int) (*graph.CSR, error) {
			return storage.LoadShard(ctx, store, m, i, j)
		})
		if err != nil {
			t.Fatal(err)
		}
		at = map[uint32]uint64{}
		for x, n := range c.Triangles {
			total += n
			if n != 0 {
				at[uint32(x)] = n
			}
		}
		return total, at
	}
	tk := tasks[0]
	first := &api.Partial{VI: []uint64{5}, VJ: []uint64{0, 7}, VK: []uint64{}}
	second := &api.Partial{VI: []uint64{1}, VJ: []uint64{}, VK: []uint64{0, 0, 2}}
	if err := js.settle(0, first); err != nil {
		t.Fatal(err)
	}
	if err := js.settle(0, second); err != nil {
		t.Fatal(err)
	}
	total, at := sum()
	want := map[uint32]uint64{l.Global(tk.I, 0): 1}
	want[l.Global(tk.K, 2)] += 2
	if total != 3 || !reflect.DeepEqual(at, want) {
		t.Fatalf("after the recount: %d triangles at %v; want 3 at %v", total, at, want)
	}
	big := &api.Partial{VI: make([]uint64, l.GroupSize(tk.I)+1)}
	if err := js.settle(1, big); err == nil {
		t.Fatal("a partial longer than its group was accepted")
	}
	if err := js.reopen(0); err != nil {
		t.Fatal(err)
	}
	if total, at := sum(); total != 0 {
		t.Fatalf("after reopening: %d triangles at %v", total, at)
	}
	if err := js.write(ctx, testCounts{}, t.TempDir(), 0); err == nil || !strings.Contains(err.Error(), "of 8 subtasks") {
		t.Fatalf("writing with subtasks missing: %v", err)
	}

	// A counted result whose partial is missing or too long becomes a
	// failed attempt; a good one passes unchanged.
	srv := &Server{log: slog.New(slog.DiscardHandler), jobs: map[api.JobID]*jobInfo{"j": {sums: js}}}
	for _, p := range []*api.Partial{nil, big} {
		r := api.Result{Ref: api.SubtaskRef{Job: "j", Index: 1}, Attempt: 1, Worker: "w", Triangles: 9, Partial: p}
		srv.checkResult(&r)
		if r.Err == "" || r.Triangles != 0 || r.Partial != nil {
			t.Errorf("partial %v: result %+v passed", p, r)
		}
	}
	good := api.Result{Ref: api.SubtaskRef{Job: "j", Index: 1}, Attempt: 1, Worker: "w", Triangles: 9, Partial: second}
	srv.checkResult(&good)
	if good.Err != "" || good.Triangles != 9 || good.Partial != second {
		t.Errorf("a good result was changed: %+v", good)
	}
}
