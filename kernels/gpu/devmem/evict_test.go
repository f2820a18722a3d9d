package devmem

import (
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

func TestPickVictim(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   []candidate
		want int
	}{
		{"none", nil, -1},
		{"one", []candidate{{slot: 3, next: 0, age: 9}}, 3},
		{"furthest next use", []candidate{{slot: 0, next: 1, age: 1}, {slot: 1, next: 4, age: 9}, {slot: 2, next: 2, age: 0}}, 1},
		{"never beats any use", []candidate{{slot: 0, next: 100, age: 1}, {slot: 5, next: never, age: 50}}, 5},
		{"equal next: oldest", []candidate{{slot: 0, next: never, age: 7}, {slot: 1, next: never, age: 3}, {slot: 2, next: never, age: 5}}, 1},
		{"empty slot (age 0) first among never", []candidate{{slot: 4, next: never, age: 2}, {slot: 6, next: never, age: 0}}, 6},
		{"equal: lowest slot", []candidate{{slot: 9, next: 2, age: 4}, {slot: 2, next: 2, age: 4}}, 2},
	} {
		if got := pickVictim(tc.cs); got != tc.want {
			t.Errorf("%s: pickVictim = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNextUse(t *testing.T) {
	a, b, c, d := &graph.CSR{}, &graph.CSR{}, &graph.CSR{}, &graph.CSR{}
	ahead := []kernels.Subtask{{IJ: a, IK: a, JK: b}, {IJ: c, IK: b, JK: c}}
	for _, tc := range []struct {
		b    *graph.CSR
		want int
	}{{a, 0}, {b, 0}, {c, 1}, {d, never}} {
		if got := nextUse(ahead, tc.b); got != tc.want {
			t.Errorf("nextUse = %d, want %d", got, tc.want)
		}
	}
	if got := nextUse(nil, a); got != never {
		t.Errorf("nextUse(nil) = %d, want never", got)
	}
}

// unit blocks of one row and 62 edges take 512 bytes each (BlockBytes).
func unitRows(int) int64  { return 1 }
func unitEdges(int) int64 { return 62 }

func TestPlanUploads(t *testing.T) {
	const b = 512 // BlockBytes(1, 62)
	if BlockBytes(1, 62) != b {
		t.Fatalf("BlockBytes(1, 62) = %d", BlockBytes(1, 62))
	}
	copyB := CopyBytes(1, 62)
	for _, tc := range []struct {
		name     string
		seq      [][3]int
		capacity int64
		slots    int
		horizon  int
		want     int
	}{
		{"all fit", [][3]int{{0, 1, 2}, {0, 1, 2}, {2, 1, 0}}, 3 * b, 16, 0, 3},
		{"same block thrice", [][3]int{{7, 7, 7}}, b, 16, 0, 1},
		// Room for three: block 3 must evict 0 or 2 (1 is its subtask's).
		// LRU evicts 0, which the next subtask needs; the future-aware rule
		// evicts 2, needed last.
		{"lru", [][3]int{{0, 1, 2}, {1, 3, 3}, {0, 1, 3}, {2, 1, 3}}, 3 * b, 16, 0, 6},
		{"belady", [][3]int{{0, 1, 2}, {1, 3, 3}, {0, 1, 3}, {2, 1, 3}}, 3 * b, 16, 8, 5},
		{"slots bound it too", [][3]int{{0, 1, 2}, {3, 4, 5}, {0, 1, 2}}, 100 * b, 4, 8, 8},
	} {
		got := PlanUploads(tc.seq, unitRows, unitEdges, tc.capacity, tc.slots, tc.horizon)
		if got.Uploads != tc.want || got.Bytes != int64(tc.want)*copyB {
			t.Errorf("%s: %+v, want %d uploads of %d bytes", tc.name, got, tc.want, copyB)
		}
	}
}

// Knowing the future never uploads more than LRU, and the uploads never
// fall below the distinct blocks; on random sequences.
func TestPlanUploadsBeladyNotWorse(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		nb := 3 + r.IntN(12)
		seq := make([][3]int, 5+r.IntN(40))
		distinct := map[int]bool{}
		for i := range seq {
			for k := range 3 {
				seq[i][k] = r.IntN(nb)
				distinct[seq[i][k]] = true
			}
		}
		capacity := int64(3+r.IntN(6)) * 512
		lru := PlanUploads(seq, unitRows, unitEdges, capacity, 16, 0)
		opt := PlanUploads(seq, unitRows, unitEdges, capacity, 16, len(seq))
		if opt.Uploads > lru.Uploads || opt.Uploads < len(distinct) {
			t.Fatalf("trial %d: %d blocks, capacity %d: belady %d uploads, lru %d, distinct %d (%v)",
				trial, nb, capacity, opt.Uploads, lru.Uploads, len(distinct), seq)
		}
	}
}
