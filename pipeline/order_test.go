package pipeline

import (
	"fmt"
	"testing"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

func TestReuseOrder(t *testing.T) {
	var tasks []partition.Subtask
	// Enumerate's order: groups by work, K ascending; here reversed groups.
	for i := 1; i >= 0; i-- {
		for j := 1; j >= 0; j-- {
			for k := range 2 {
				tasks = append(tasks, partition.Subtask{I: i, J: j, K: k, Edges: int64(10*i + j)})
			}
		}
	}
	got := ""
	for _, s := range reuseOrder(tasks) {
		got += fmt.Sprintf("%d%d%d ", s.I, s.J, s.K)
	}
	// I ascending; J ascending for I = 0, descending for I = 1; K snaking.
	want := "000 001 011 010 110 111 101 100 "
	if got != want {
		t.Errorf("reuseOrder = %q, want %q", got, want)
	}
	// Every subtask once, fields kept.
	seen := map[[3]int]partition.Subtask{}
	for _, s := range reuseOrder(tasks) {
		seen[[3]int{s.I, s.J, s.K}] = s
	}
	for _, s := range tasks {
		if seen[[3]int{s.I, s.J, s.K}] != s {
			t.Errorf("subtask %+v lost or changed", s)
		}
	}
	if len(reuseOrder(nil)) != 0 {
		t.Error("reuseOrder(nil) not empty")
	}
}

// On an rmat graph cut into P x P hash blocks, the reuse order with the
// next subtasks known copies fewer bytes through a device's block cache
// than the enumeration order with LRU (gpu.PlanUploads), at a quarter of
// the CSR.
func TestReuseOrderCopiesLess(t *testing.T) {
	fwd := testForward(t, 12, 3)
	csr := 8*(fwd.NumRows()+1) + 4*fwd.NumEdges()
	for _, p := range []int{4, 6} {
		part, err := partition.PartitionInMemory(t.Context(), fwd, partition.Config{Scheme: storage.SchemeHash, P: p, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		tasks := part.Subtasks()
		ids := func(ts []partition.Subtask) [][3]int {
			s := make([][3]int, len(ts))
			for x, u := range ts {
				s[x] = [3]int{u.I*p + u.J, u.I*p + u.K, u.J*p + u.K}
			}
			return s
		}
		rows := func(id int) int64 { return part.Block(id/p, id%p).NumRows() }
		edges := func(id int) int64 { return part.Block(id/p, id%p).NumEdges() }
		before := gpu.PlanUploads(ids(tasks), rows, edges, csr/4, 16, 0)
		after := gpu.PlanUploads(ids(reuseOrder(tasks)), rows, edges, csr/4, 16, deviceAhead)
		t.Logf("P=%d: %d bytes in %d uploads, reordered %d bytes in %d uploads (CSR %d)", p, before.Bytes, before.Uploads, after.Bytes, after.Uploads, csr)
		if after.Bytes >= before.Bytes {
			t.Errorf("P=%d: the reuse order copies %d bytes, the enumeration order %d", p, after.Bytes, before.Bytes)
		}
	}
}

// fastP keeps the smallest P when every P fits easily, never leaves
// [pFit, 2 pFit], and on an rmat-sized graph under a tight cap prefers a P
// whose blocks leave room for overlap.
func TestFastP(t *testing.T) {
	m := DefaultSpeedModel()
	const n, e = 8 << 20, 129 << 20 // rmat 23
	csr := 8*(n+1) + 4*int64(e)
	for _, tc := range []struct {
		div  int64
		pFit int
	}{{1, 2}, {4, 4}, {20, 10}} {
		p, _ := fastP(m, n, e, tc.pFit, csr/tc.div)
		for q := tc.pFit; q <= 2*tc.pFit; q++ {
			t.Logf("CSR/%d P=%d: %.3f s", tc.div, q, m.seconds(n, e, q, csr/tc.div))
		}
		t.Logf("CSR/%d: P fits from %d, fastP %d", tc.div, tc.pFit, p)
		if p < tc.pFit || p > 2*tc.pFit {
			t.Errorf("CSR/%d: fastP %d outside [%d, %d]", tc.div, p, tc.pFit, 2*tc.pFit)
		}
	}
	if p, _ := fastP(m, n, e, 170, 1<<20); p != 170 {
		t.Errorf("P fits from 170: fastP %d, want 170 (not modelled)", p)
	}
	if p, _ := fastP(m, 1000, 10000, 1, 1<<30); p != 1 {
		t.Errorf("a small graph on a large device: fastP %d, want 1", p)
	}
	// The whole graph with room for it and its indexes stays whole.
	if p, _ := fastP(m, n, e, 1, 2*csr); p != 1 {
		t.Errorf("rmat 23 at twice its CSR: fastP %d, want 1", p)
	}
}

// streamOrder keeps every subtask once and groups them by (J, K): a
// counter streaming rows uploads each JK once.
func TestStreamOrder(t *testing.T) {
	for _, p := range []int{1, 2, 3, 4, 7} {
		tasks := hashTasks(p)
		got := streamOrder(tasks)
		if len(got) != len(tasks) {
			t.Fatalf("P=%d: %d subtasks, want %d", p, len(got), len(tasks))
		}
		seen := map[partition.Subtask]bool{}
		changes := 0
		for i, s := range got {
			if seen[s] {
				t.Fatalf("P=%d: %v twice", p, s)
			}
			seen[s] = true
			if i == 0 || s.J != got[i-1].J || s.K != got[i-1].K {
				changes++
			}
		}
		if changes != p*p {
			t.Errorf("P=%d: JK changes %d times, want %d", p, changes, p*p)
		}
	}
}

// Auto streams exactly when three blocks and an index do not fit the
// budget but JK, its index and two sets of ranges do.
func TestStreamRowsRule(t *testing.T) {
	cfg := Config{Slots: []worker.Slot{{Device: api.Device{Kind: "gpu"}}}}
	rows, edges := int64(1_000_000), int64(8_000_000)
	b := gpu.BlockBytes(rows, edges)
	for _, c := range []struct {
		budget int64
		mode   StreamMode
		want   bool
	}{
		{0, StreamAuto, false},
		{4 * b, StreamAuto, false}, // three blocks and the index fit
		{3 * b, StreamAuto, true},  // they do not; JK, index and ranges do
		{b, StreamAuto, false},     // not even those
		{3 * b, StreamOff, false},
		{0, StreamOn, true},
	} {
		cfg.Budget, cfg.RowStream = c.budget, c.mode
		if got := streamRows(&cfg, rows, edges, &Report{}); got != c.want {
			t.Errorf("budget %d (%.2f blocks) mode %d: %v, want %v", c.budget, float64(c.budget)/float64(b), c.mode, got, c.want)
		}
	}
	cpu := Config{Slots: []worker.Slot{{Device: api.Device{Kind: "cpu"}}}, RowStream: StreamOn}
	if streamRows(&cpu, rows, edges, &Report{}) {
		t.Error("the CPU streams rows")
	}
}
