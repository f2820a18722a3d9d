package partition

import "github.com/trigrid/trigrid/internal/testlong"

// sweepPs are the partition counts that the sweeps try: the whole graph,
// an even, an odd and a prime P by default, and every one the sweeps were
// written for when long tests are on.
func sweepPs() []int {
	if testlong.Enabled() {
		return []int{1, 2, 3, 4, 5, 8}
	}
	return []int{1, 2, 3, 5}
}
