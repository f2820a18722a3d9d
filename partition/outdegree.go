package partition

import (
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
)

// outDegrees sums the forward (out-)degree of every vertex over the
// blocks of its row group as they are built, so that the external
// partitioner can record the forward max degree without another pass.
// add may be called concurrently.
type outDegrees struct {
	deg [][]uint32 // deg[I][local row]
}

func newOutDegrees(l *Layout) *outDegrees {
	f := &outDegrees{deg: make([][]uint32, l.P)}
	for i := range l.P {
		f.deg[i] = make([]uint32, l.GroupSize(i))
	}
	return f
}

// add counts the rows of block (i, j).
func (f *outDegrees) add(i int, b *graph.CSR) {
	d := f.deg[i]
	for r := range b.NumRows() {
		if n := b.Degree(r); n > 0 {
			atomic.AddUint32(&d[r], uint32(n))
		}
	}
}

// max is the largest forward degree; call it after every add returned.
func (f *outDegrees) max() int64 {
	var m uint32
	for _, d := range f.deg {
		for _, v := range d {
			m = max(m, v)
		}
	}
	return int64(m)
}
