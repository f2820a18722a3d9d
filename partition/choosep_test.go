package partition

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/storage"
)

func TestChooseP(t *testing.T) {
	// Scale 12 with budgets a quarter of scale 14's gives the same P (1, 3,
	// 4 or 5). The range scheme's fold search at P = 4 and 5 takes most of
	// the time under the race detector, so the smallest budget and scale
	// 14 are long tests.
	scale, div := 12, int64(4)
	budgets := []int64{1 << 30, 4 << 20, 1 << 20}
	if testlong.Enabled() {
		scale, div = 14, 1
		budgets = append(budgets, 512<<10)
	}
	fwd := refForward(rmatEdges(scale, 16, 5))
	model := MemModel{ScratchFixed: 1 << 10}
	for _, b := range budgets {
		budget := b / div
		for _, sc := range schemes {
			p, err := ChoosePForGraph(fwd, sc, budget, model, 2)
			if err != nil {
				t.Fatal(err)
			}
			part, err := Split(fwd, sc, p, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !FitsBudget(p, part.blockStat, budget, model) {
				t.Errorf("%v budget %d: ChooseP gave P=%d but its real blocks do not fit", sc, budget, p)
			}
			if p > 1 {
				smaller, err := Split(fwd, sc, p-1, 2)
				if err != nil {
					t.Fatal(err)
				}
				if FitsBudget(p-1, smaller.blockStat, budget, model) && sc == storage.SchemeHash {
					t.Errorf("%v budget %d: P=%d would have fit, ChooseP gave %d", sc, budget, p-1, p)
				}
			}
			t.Logf("%v budget %d: P=%d", sc, budget, p)
		}
	}
}

// A budget below the fixed reserve says so; a budget that no P fits gives
// the least budget and the P it chooses, and that budget then chooses that
// P; a byte less chooses none.
func TestChoosePErrors(t *testing.T) {
	fwd := refForward(rmatEdges(10, 8, 3))
	_, err := ChoosePForGraph(fwd, storage.SchemeHash, 1<<20, MemModel{}, 2)
	if err == nil || !strings.Contains(err.Error(), "beside the fixed reserve of 1048576 bytes") {
		t.Errorf("budget at the reserve: %v", err)
	}
	var be *BudgetError
	if !errors.As(err, &be) || be.Least <= 1<<20 || be.P < 1 || be.P > UsefulP(fwd.NumEdges()) {
		t.Fatalf("budget at the reserve: %#v", err)
	}
	if p, err := ChoosePForGraph(fwd, storage.SchemeHash, be.Least, MemModel{}, 2); err != nil || p != be.P {
		t.Errorf("the least budget %d: P=%d, %v; the error said P=%d", be.Least, p, err, be.P)
	}
	if _, err := ChoosePForGraph(fwd, storage.SchemeHash, be.Least-1, MemModel{}, 2); err == nil {
		t.Errorf("a byte below the least budget %d chose a P", be.Least)
	}
	gpuish := MemModel{BlockBytes: func(rows, edges int64) int64 { return 256 * ((8*(rows+1)+255)/256 + (4*max(edges, 1)+255)/256) }, ScratchFixed: 256}
	for _, sc := range schemes {
		whole, err := ChoosePForGraph(fwd, sc, 1<<30, gpuish, 2)
		if err != nil || whole != 1 {
			t.Errorf("%v: a large budget chose P=%d, %v", sc, whole, err)
		}
	}
	// Row ranges let a budget far below three blocks count (hash: the
	// range scheme's layouts at large P take seconds).
	sc := storage.SchemeHash
	split := gpuish
	split.RowSplit = true
	small := int64(16 << 10)
	pw, errWhole := ChoosePForGraph(fwd, sc, small, gpuish, 2)
	ps, errSplit := ChoosePForGraph(fwd, sc, small, split, 2)
	if errSplit != nil {
		t.Errorf("row split at %d bytes: %v", small, errSplit)
	} else if errWhole == nil && ps > pw {
		t.Errorf("row split chose P=%d, whole blocks P=%d", ps, pw)
	}
	_, err = ChoosePForGraph(fwd, sc, 600, split, 2)
	const says = "the least that fits is "
	if err == nil || !strings.Contains(err.Error(), says) {
		t.Fatalf("600 bytes: %v", err)
	}
	var least int64
	rest := strings.TrimPrefix(err.Error()[strings.Index(err.Error(), says)+len(says):], "about ")
	if _, err := fmt.Sscanf(rest, "%d", &least); err != nil {
		t.Fatal(err)
	}
	if _, err := ChoosePForGraph(fwd, sc, least, split, 2); err != nil {
		t.Errorf("the least budget %d: %v", least, err)
	}
}

// UsefulP keeps blocks at minBlockEdges edges or more on average.
func TestUsefulP(t *testing.T) {
	for _, tc := range []struct {
		edges int64
		want  int
	}{{0, 1}, {1000, 1}, {4096, 2}, {4095, 1}, {1 << 20, 32}, {1<<20 - 1, 31}, {1 << 50, maxP}} {
		if got := UsefulP(tc.edges); got != tc.want {
			t.Errorf("UsefulP(%d) = %d, want %d", tc.edges, got, tc.want)
		}
	}
}

// blockEdgeCounts, on any number of workers, gives the edges of the
// blocks that Split builds.
func TestBlockEdgeCounts(t *testing.T) {
	t.Parallel()
	scale := 10
	if testlong.Enabled() {
		scale = 12
	}
	fwd := refForward(rmatEdges(scale, 16, 7))
	for _, sc := range schemes {
		for _, p := range []int{1, 3, 4} {
			part, err := Split(fwd, sc, p, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range []int{1, 3, 16} {
				l, err := NewLayout(fwd, sc, p, w)
				if err != nil {
					t.Fatal(err)
				}
				got := blockEdgeCounts(fwd, l, p, w)
				for i := range p {
					for j := range p {
						if want := part.blockStat(i, j).Edges; got[i*p+j] != want {
							t.Fatalf("%v P=%d workers %d: block (%d,%d) has %d edges, Split's %d", sc, p, w, i, j, got[i*p+j], want)
						}
					}
				}
			}
		}
	}
}
