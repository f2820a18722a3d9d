package partition

import (
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
