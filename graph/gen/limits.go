package gen

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/osmem"
)

// edgeBytes is the in-memory size of one graph.Edge.
const edgeBytes = uint64(unsafe.Sizeof(graph.Edge{}))

// checkEdgeCount refuses edge lists that cannot be allocated: longer than a
// slice may be, or larger than the machine's memory (or GOMEMLIMIT, when
// set). Refusing up front gives a clear message instead of an out-of-memory
// kill minutes later.
func checkEdgeCount(what string, m uint64) error {
	if m > uint64(math.MaxInt)/edgeBytes {
		return fmt.Errorf("gen: %s: %d edges cannot be held in memory", what, m)
	}
	need := m * edgeBytes
	if limit, src := osmem.Limit(); limit > 0 && need > limit {
		return fmt.Errorf("gen: %s: %d edges need %.1f GiB, more than the %.1f GiB %s",
			what, m, gib(need), gib(limit), src)
	}
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }
