package pipeline

import (
	"cmp"
	"slices"

	"github.com/trigrid/trigrid/partition"
)

// reuseOrder orders the subtasks of a run on one device for its block
// cache: (I, J) groups by I, J ascending for even I and descending for odd
// I, and K ascending and descending in turn from one group to the next.
// Consecutive subtasks then share blocks: within a group IJ stays; from
// one group to the next the last subtask's IK (same I) or JK (same J) is
// the next one's first. The counts do not depend on the order; the
// scheduler hands a lone worker its subtasks group by group in list order.
func reuseOrder(tasks []partition.Subtask) []partition.Subtask {
	return snakeOrder(tasks, func(t partition.Subtask) (outer, mid, inner int) { return t.I, t.J, t.K })
}

// streamOrder orders the subtasks of a run on one device that streams IJ
// and IK beside a resident JK: (J, K) groups by J, K snaking with J, and I
// ascending and descending in turn from one group to the next, so that
// each JK is uploaded once and consecutive groups share a row range's
// block (IK with the same I and K at the groups' seam).
func streamOrder(tasks []partition.Subtask) []partition.Subtask {
	return snakeOrder(tasks, func(t partition.Subtask) (outer, mid, inner int) { return t.J, t.K, t.I })
}

// snakeOrder groups tasks by (outer, mid) of key, outer ascending, mid
// ascending for even outer and descending for odd, and inner ascending and
// descending in turn from one group to the next.
func snakeOrder(tasks []partition.Subtask, key func(partition.Subtask) (outer, mid, inner int)) []partition.Subtask {
	out := slices.Clone(tasks)
	slices.SortStableFunc(out, func(a, b partition.Subtask) int {
		ao, am, ai := key(a)
		bo, bm, bi := key(b)
		if ao%2 == 1 {
			am = -am
		}
		if bo%2 == 1 {
			bm = -bm
		}
		return cmp.Or(cmp.Compare(ao, bo), cmp.Compare(am, bm), cmp.Compare(ai, bi))
	})
	desc := false
	for lo := 0; lo < len(out); {
		o, m, _ := key(out[lo])
		hi := lo + 1
		for hi < len(out) {
			ho, hm, _ := key(out[hi])
			if ho != o || hm != m {
				break
			}
			hi++
		}
		if desc {
			slices.Reverse(out[lo:hi])
		}
		desc = !desc
		lo = hi
	}
	return out
}

// oneDevice reports whether the run counts on a single GPU, where the
// subtasks' order decides what the device's block cache reuses.
func oneDevice(cfg *Config) bool {
	return len(cfg.Slots) == 1 && cfg.Slots[0].Device.Kind == "gpu"
}

// deviceAhead is how many assignments a lone GPU worker pulls ahead: the
// counter sees that many of its next subtasks (kernels.Subtask.Ahead), to
// upload their blocks early and keep those it will need.
const deviceAhead = 16
