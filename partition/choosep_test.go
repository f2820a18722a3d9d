package partition

import (
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/storage"
)

func TestChooseP(t *testing.T) {
	// Scale 12 with budgets a quarter of scale 14's gives the same range
	// of P; scale 14 is a long test.
	scale, div := 12, int64(4)
	if testlong.Enabled() {
		scale, div = 14, 1
	}
	fwd := refForward(rmatEdges(scale, 16, 5))
	model := MemModel{ScratchFixed: 1 << 10}
	for _, budget := range []int64{1 << 30, 4 << 20 / div, 1 << 20 / div, 512 << 10 / div} {
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
