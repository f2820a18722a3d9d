package simulate

import (
	"strings"
	"testing"

	"github.com/trigrid/trigrid/storage"
)

// uniformGrid is a P x P grid of equal blocks.
func uniformGrid(t *testing.T, p int) *Grid {
	t.Helper()
	groups := make([]int64, p)
	blocks := make([]int64, p*p)
	for i := range groups {
		groups[i] = 1000
	}
	for i := range blocks {
		blocks[i] = 5000
	}
	g, err := NewGrid("uniform", storage.SchemeHash, p, int64(p)*1000, int64(p*p)*5000, groups, blocks)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A mixed cluster, one worker ten times as fast as each of the three
// others: the job ends near the bound the speeds give (the work over
// their sum), the fast worker does most of it, and the fair share of
// outstanding attempts (each worker's by its slots, not its speed) costs
// nothing against no fair share. The bound holds independently of the
// simulator: no schedule beats total work over total speed.
func TestSimulateMixedSpeeds(t *testing.T) {
	g := uniformGrid(t, 8)
	m := msModel()
	m.KernelNsPerWork = 40 // 512 subtasks of about 2 ms on the fast worker
	m.Prefetch = 2
	one, err := Simulate(g, DefaultConfig(1, m))
	if err != nil {
		t.Fatal(err)
	}
	speeds := []float64{1, 0.1, 0.1, 0.1}
	bound := one.MakespanSeconds / 1.3
	var spans [2]float64
	for x, noFair := range []bool{false, true} {
		cfg := DefaultConfig(len(speeds), m)
		cfg.Speeds = speeds
		cfg.Scheduler.NoFairShare = noFair
		r, err := Simulate(g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		spans[x] = r.MakespanSeconds
		if r.MakespanSeconds < bound*(1-1e-9) {
			t.Fatalf("no fair share %v: makespan %.3f s below the bound %.3f s", noFair, r.MakespanSeconds, bound)
		}
		if r.MakespanSeconds > 1.1*bound {
			t.Errorf("no fair share %v: makespan %.3f s, over 1.1x the bound %.3f s", noFair, r.MakespanSeconds, bound)
		}
		// The fast worker is busy about the whole job, a slow one as well:
		// busy times within 10% of each other.
		if r.IR == nil || *r.IR > 1.1 {
			t.Errorf("no fair share %v: IR %v, want at most 1.1", noFair, r.IR)
		}
	}
	if spans[0] > spans[1]*1.01 {
		t.Errorf("fair share %.3f s, without %.3f s", spans[0], spans[1])
	}
	// Uniform speeds of 1 are the default's simulation exactly.
	cfg := DefaultConfig(4, m)
	plain, _ := Simulate(g, cfg)
	cfg.Speeds = []float64{1}
	same, err := Simulate(g, cfg)
	same.IR, plain.IR = nil, nil // pointers to equal values
	if err != nil || same != plain {
		t.Fatalf("speeds 1: %+v (%v), default %+v", same, err, plain)
	}
}

func TestSimulateSpeedsChecked(t *testing.T) {
	for _, bad := range [][]float64{{0}, {1, -1}} {
		cfg := DefaultConfig(2, msModel())
		cfg.Speeds = bad
		if _, err := Simulate(tinyGrid(t), cfg); err == nil || !strings.Contains(err.Error(), "speed") {
			t.Errorf("speeds %v: error %v", bad, err)
		}
	}
}

// Run's efficiency with speeds is against their sum: the mixed cluster
// above is near 100%, not 1.3/4.
func TestRunEfficiencyWithSpeeds(t *testing.T) {
	m := msModel()
	m.KernelNsPerWork = 40
	m.Prefetch = 2
	rep, err := Run(Stats{Source: "uniform", Grid: uniformGrid(t, 8)}, Options{Workers: []int{4}, Model: m, Speeds: []float64{1, 0.1, 0.1, 0.1}})
	if err != nil {
		t.Fatal(err)
	}
	if e := rep.Rows[0].Efficiency; e < 0.9 || e > 1 {
		t.Fatalf("efficiency %.3f, want 0.9 to 1", e)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "speeds, in turn: 1 0.1 0.1 0.1") {
		t.Fatalf("table (%v):\n%s", err, b.String())
	}
}
