package devmem

import (
	"math/rand/v2"
	"testing"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/testreflib"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// openRef opens the reference library.
func openRef(t *testing.T) *abi.Lib {
	t.Helper()
	good, _ := testreflib.Paths(t)
	lib, err := abi.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// forward is the forward graph (ranks by (degree, id)) of m random edges
// over n ids, built by the graph package's CPU path.
func forward(t testing.TB, n, m int, seed uint64) *graph.CSR {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	e := make([]graph.Edge, m)
	for i := range e {
		e[i] = graph.Edge{U: uint64(r.IntN(n)), V: uint64(r.IntN(n))}
	}
	g, _, _, err := graph.ForwardFromEdges(e, graph.OrderDegree, 2)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// hashSubtasks is every subtask (I, J, K) of g's P x P hash partition
// (block B[I][J]: rows x mod P == I, local x div P, columns likewise),
// in (I, J, K) order.
func hashSubtasks(g *graph.CSR, p int) []kernels.Subtask {
	n := g.NumRows()
	blocks := make([][]*graph.CSR, p)
	for i := range blocks {
		blocks[i] = make([]*graph.CSR, p)
		for j := range blocks[i] {
			rows := (n - int64(i) + int64(p) - 1) / int64(p)
			b := &graph.CSR{Offsets: make([]uint64, 1, rows+1), NCols: (n - int64(j) + int64(p) - 1) / int64(p)}
			for lr := int64(0); lr < rows; lr++ {
				for _, v := range g.Row(lr*int64(p) + int64(i)) {
					if int(v)%p == j {
						b.Cols = append(b.Cols, v/uint32(p))
					}
				}
				b.Offsets = append(b.Offsets, uint64(len(b.Cols)))
			}
			blocks[i][j] = b
		}
	}
	var ts []kernels.Subtask
	for i := range p {
		for j := range p {
			for k := range p {
				ts = append(ts, kernels.Subtask{IJ: blocks[i][j], IK: blocks[i][k], JK: blocks[j][k]})
			}
		}
	}
	return ts
}
