package kernels

import (
	"fmt"
	"strings"
)

// CPUOptions configures the CPU kernels.
type CPUOptions struct {
	// Workers is the number of counting goroutines; 0 means GOMAXPROCS.
	// More workers than chunks of work are not started.
	Workers int
	// Progress, when not nil, is called with the IJ edges done so far and
	// the subtask's total, at most every 250 ms and once at the end of each
	// Count. Calls come from one goroutine at a time, so it needs no
	// locking, but it should return quickly.
	Progress func(doneEdges, totalEdges int64)
}

// cpuKernels maps names to constructors. "reference" is listed last: it is
// for verification, not speed.
var cpuKernels = []struct {
	name string
	make func(CPUOptions) Counter
}{
	{"auto", func(o CPUOptions) Counter { return &autoCounter{opts: o} }},
	{"hash", func(o CPUOptions) Counter { return &hashCounter{opts: o} }},
	{"hashcol", func(o CPUOptions) Counter { return &hashCounter{opts: o, byCols: true} }},
	{"merge", func(o CPUOptions) Counter { return &mergeCounter{opts: o} }},
	{"local", func(o CPUOptions) Counter { return &localCounter{opts: o} }},
	{"reference", func(CPUOptions) Counter { return referenceCounter{} }},
}

// CPUKernelNames lists the CPU kernel names NewCPU accepts.
func CPUKernelNames() []string {
	names := make([]string, len(cpuKernels))
	for i, k := range cpuKernels {
		names[i] = k.name
	}
	return names
}

// NewCPU returns the CPU kernel called name. The Counter it returns keeps
// scratch between calls and, like every Counter, serves one goroutine at a
// time; each Count runs opts.Workers goroutines of its own.
func NewCPU(name string, opts CPUOptions) (Counter, error) {
	for _, k := range cpuKernels {
		if k.name == name {
			return k.make(opts), nil
		}
	}
	return nil, fmt.Errorf("kernels: unknown CPU kernel %q (valid: %s)", name, strings.Join(CPUKernelNames(), ", "))
}
