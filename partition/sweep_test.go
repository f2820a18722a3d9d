package partition

import "github.com/trigrid/trigrid/internal/testlong"

// sweepPs are the partition counts that the sweeps try: the whole graph,
// an even and an odd P by default, and every one the sweeps were written
// for when long tests are on. The range scheme's fold search grows fast
// with P under the race detector (P = 5 takes seconds on a graph of 2^11
// vertices), so larger P are long tests.
func sweepPs() []int {
	if testlong.Enabled() {
		return []int{1, 2, 3, 4, 5, 8}
	}
	return []int{1, 2, 3}
}
