package simulate

import (
	"math"
	"reflect"
	"testing"

	"github.com/trigrid/trigrid/storage"
)

// tinyGrid is a P = 2 grid whose groups have one row each, so a
// subtask's work is e(IJ) * (1 + e(IK) + e(JK)): blocks 00, 01 and 11
// hold 1, 2 and 1 edges, block 10 none. Its subtasks, in the
// coordinator's order (groups of (I, J) by total work, ties in (I, J)
// order): (0,0,0) work 3, (0,0,1) 5, (0,1,1) 8, (1,1,1) 3.
func tinyGrid(t *testing.T) *Grid {
	t.Helper()
	g, err := NewGrid("tiny", storage.SchemeHash, 2, 2, 4, []int64{1, 1}, []int64{1, 2, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// msModel counts a work unit as 1 ms, with nothing else costing time
// and no prefetch: the classic list schedule.
func msModel() Model {
	return Model{Kind: ModelKind, Format: ModelFormat, Device: "cpu", KernelNsPerWork: 1e6, CacheBytes: 1 << 30}
}

func simulate(t *testing.T, g *Grid, workers int, m Model) Result {
	t.Helper()
	r, err := Simulate(g, DefaultConfig(workers, m))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestTinyGridSubtasks(t *testing.T) {
	var got [][4]int64
	for _, s := range tinyGrid(t).Subtasks() {
		got = append(got, [4]int64{int64(s.I), int64(s.J), int64(s.K), s.Work})
	}
	want := [][4]int64{{0, 0, 0, 3}, {0, 0, 1, 5}, {0, 1, 1, 8}, {1, 1, 1, 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("subtasks %v, want %v", got, want)
	}
}

// Makespans worked out by hand from the scheduler's rules (a worker
// keeps to its (I, J) group, then takes a group no one has taken).
func TestSimulateHandComputed(t *testing.T) {
	g := tinyGrid(t)

	// One worker counts everything in turn: 3 + 5 + 8 + 3 ms.
	r := simulate(t, g, 1, msModel())
	if !near(r.MakespanSeconds, 0.019) || r.IR == nil || *r.IR != 1 || r.Attempts != 4 || !near(r.Utilization, 1) {
		t.Errorf("one worker: %+v", r)
	}

	// Two workers: w1 takes (0,0,0) [0, 3], w2 the fresh group (0,1):
	// (0,1,1) [0, 8]; w1 stays in (0,0): (0,0,1) [3, 8]; at 8 ms w2's
	// result (sent first) takes the last group: (1,1,1) [8, 11].
	r = simulate(t, g, 2, msModel())
	if !near(r.MakespanSeconds, 0.011) || !near(r.MaxBusySeconds, 0.011) || !near(r.MinBusySeconds, 0.008) ||
		r.IR == nil || !near(*r.IR, 11.0/8) {
		t.Errorf("two workers: makespan %v, busy %v..%v, IR %v; want 11 ms, 8..11 ms, 1.375", r.MakespanSeconds,
			r.MinBusySeconds, r.MaxBusySeconds, r.IR)
	}

	// Five workers for four subtasks: one never counts, IR is infinite.
	if r = simulate(t, g, 5, msModel()); r.IR != nil || !near(r.MakespanSeconds, 0.008) {
		t.Errorf("five workers: makespan %v, IR %v; want 8 ms, infinite", r.MakespanSeconds, r.IR)
	}

	// Loads of 1 ms a block before the kernel on the same core: one
	// worker with a cache loads blocks 00, 01 and 11 once each (22 ms);
	// without a cache each subtask loads its distinct blocks (1 + 2 + 2 +
	// 1: 25 ms). The worker's core decodes: busy all along.
	m := msModel()
	m.LoadNsPerBlock = 1e6
	r = simulate(t, g, 1, m)
	if !near(r.MakespanSeconds, 0.022) || !near(r.MaxBusySeconds, 0.022) || !near(r.LoadSeconds, 0.003) || r.LoadElements != 2+3+2 {
		t.Errorf("loads, cached: %+v", r)
	}
	m.CacheBytes = 0
	if r = simulate(t, g, 1, m); !near(r.MakespanSeconds, 0.025) || !near(r.LoadSeconds, 0.006) {
		t.Errorf("loads, no cache: %+v", r)
	}

	// Start, end and messages: each of the four subtasks is a hand-out
	// (0.5 ms) and a result (0.5 ms) away from the next, so 2 + 4 * (0.5
	// + 0.5) + 19 + 3 ms.
	m = msModel()
	m.StartNs, m.EndNs, m.MessageNs = 2e6, 3e6, 0.5e6
	r = simulate(t, g, 1, m)
	if !near(r.MakespanSeconds, 0.028) {
		t.Errorf("start, end, messages: makespan %v, want 28 ms", r.MakespanSeconds)
	}
}

// With prefetch the next assignments wait at the worker, up to its fair
// share of the job (the scheduler's): of four subtasks, a worker of two
// holds two. Overlapped loads hide behind the kernel.
func TestSimulatePrefetchAndOverlap(t *testing.T) {
	g := tinyGrid(t)
	m := msModel()
	m.Prefetch = 2
	// w1 pulls 3 and gets its share of 2: (0,0,0), (0,0,1) from its
	// group, 3 + 5 = 8 ms; w2 gets (0,1,1) and (1,1,1), 8 + 3 = 11 ms.
	if r := simulate(t, g, 2, m); !near(r.MakespanSeconds, 0.011) || !near(r.MinBusySeconds, 0.008) {
		t.Errorf("prefetch 2: makespan %v, min busy %v; want 11 ms, 8 ms", r.MakespanSeconds, r.MinBusySeconds)
	}
	// One worker, loads of 1 ms a block overlapping: (0,0,0) waits for
	// block 00 (1 ms) then counts [1, 4]; the other loads finish by 3 ms,
	// so the rest follow back to back: 1 + 19 ms.
	// Busy is the kernels' 19 ms alone.
	m.LoadNsPerBlock, m.OverlapLoads = 1e6, true
	if r := simulate(t, g, 1, m); !near(r.MakespanSeconds, 0.020) || !near(r.MaxBusySeconds, 0.019) {
		t.Errorf("overlapped loads: makespan %v, busy %v; want 20 and 19 ms", r.MakespanSeconds, r.MaxBusySeconds)
	}
}

// The same simulation twice gives the same result, to the nanosecond;
// the real scheduler hands out each subtask once when none straggles.
func TestSimulateDeterministic(t *testing.T) {
	blocks := make([]int64, 36)
	var edges int64
	for i := range blocks {
		blocks[i] = int64(100 + 37*i%11)
		edges += blocks[i]
	}
	g, err := NewGrid("6x6", storage.SchemeHash, 6, 600, edges, []int64{100, 100, 100, 100, 100, 100}, blocks)
	if err != nil {
		t.Fatal(err)
	}
	m := msModel()
	m.KernelNsPerWork, m.LoadNsPerElement, m.Prefetch = 1e3, 50, 2
	a, b := simulate(t, g, 7, m), simulate(t, g, 7, m)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.Subtasks != 216 || a.Attempts != 216 || a.Speculated != 0 {
		t.Errorf("%d subtasks, %d attempts, %d speculated", a.Subtasks, a.Attempts, a.Speculated)
	}
}
