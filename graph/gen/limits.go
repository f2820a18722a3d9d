package gen

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
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
	if limit, src := memoryLimit(); limit > 0 && need > limit {
		return fmt.Errorf("gen: %s: %d edges need %.1f GiB, more than the %.1f GiB %s",
			what, m, gib(need), gib(limit), src)
	}
	return nil
}

func gib(b uint64) float64 { return float64(b) / (1 << 30) }

// memoryLimit returns the tighter of GOMEMLIMIT and the machine's total
// memory, with a word for the message; 0 when neither is known.
func memoryLimit() (uint64, string) {
	limit, src := uint64(0), ""
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		limit, src = uint64(l), "memory limit (GOMEMLIMIT)"
	}
	if t := memTotal(); t > 0 && (limit == 0 || t < limit) {
		limit, src = t, "memory of this machine"
	}
	return limit, src
}

// memTotal reads MemTotal from /proc/meminfo; 0 where it is unavailable.
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "MemTotal:") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return 0
		}
		kb, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil || kb > math.MaxUint64/1024 {
			return 0
		}
		return kb * 1024
	}
	return 0
}
