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
	out := slices.Clone(tasks)
	// Group rank of (I, J): I, then J snaking with I.
	jRank := func(t partition.Subtask) int {
		if t.I%2 == 1 {
			return -t.J
		}
		return t.J
	}
	slices.SortStableFunc(out, func(a, b partition.Subtask) int {
		return cmp.Or(cmp.Compare(a.I, b.I), cmp.Compare(jRank(a), jRank(b)), cmp.Compare(a.K, b.K))
	})
	// K descending in every other group.
	desc := false
	for lo := 0; lo < len(out); {
		hi := lo + 1
		for hi < len(out) && out[hi].I == out[lo].I && out[hi].J == out[lo].J {
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

// streamOrder orders the subtasks of a run on one device that streams IJ
// and IK beside a resident JK: (J, K) groups by J, K snaking with J, and I
// ascending and descending in turn from one group to the next, so that
// each JK is uploaded once and consecutive groups share a row range's
// block (IK with the same I and K at the groups' seam).
func streamOrder(tasks []partition.Subtask) []partition.Subtask {
	out := slices.Clone(tasks)
	kRank := func(t partition.Subtask) int {
		if t.J%2 == 1 {
			return -t.K
		}
		return t.K
	}
	slices.SortStableFunc(out, func(a, b partition.Subtask) int {
		return cmp.Or(cmp.Compare(a.J, b.J), cmp.Compare(kRank(a), kRank(b)), cmp.Compare(a.I, b.I))
	})
	desc := false
	for lo := 0; lo < len(out); {
		hi := lo + 1
		for hi < len(out) && out[hi].J == out[lo].J && out[hi].K == out[lo].K {
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
