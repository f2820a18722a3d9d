package devmem

import (
	"math"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
)

// Which resident block to give up. The subtasks a counter will count next
// are known (kernels.Subtask.Ahead), so the slot cache evicts the block
// needed furthest in the future (Belady's rule, optimal for a cache of
// equal-sized entries when the future is fully known), and among blocks
// not needed within what is known, the least recently used.

// never is the next use of a block no known subtask reads.
const never = math.MaxInt

// nextUse is the position in ahead of the first subtask that reads b, or
// never.
func nextUse(ahead []kernels.Subtask, b *graph.CSR) int {
	for n, a := range ahead {
		if a.IJ == b || a.IK == b || a.JK == b {
			return n
		}
	}
	return never
}

// candidate is a slot that may be given up: the next use of its block
// (never for an empty slot or a collected block) and its age (0 for those,
// else the tick of its last use).
type candidate struct {
	slot int
	next int
	age  uint64
}

// pickVictim is the candidate to evict: the one needed furthest ahead,
// among equals the oldest, among equals the lowest slot. -1 when there is
// none.
func pickVictim(cs []candidate) int {
	best := -1
	for i, c := range cs {
		if best < 0 {
			best = i
			continue
		}
		b := cs[best]
		if c.next > b.next || c.next == b.next && (c.age < b.age || c.age == b.age && c.slot < b.slot) {
			best = i
		}
	}
	if best < 0 {
		return -1
	}
	return cs[best].slot
}

// UploadPlan is what a slot cache uploads for a sequence of subtasks.
type UploadPlan struct {
	Uploads int   // blocks copied
	Bytes   int64 // bytes copied (CopyBytes of each upload)
}

// PlanUploads simulates the counter's slot cache on seq, subtasks given as
// the ids of their three blocks (ij, ik, jk): at most slots blocks and
// capacity bytes (BlockBytes of each resident block) resident, a missing
// block uploaded, the victim chosen by pickVictim with the next horizon
// subtasks known (0: none, which is LRU). rows and edges give each
// block's size. A subtask whose blocks alone exceed capacity is counted as
// uploading them (the counter would split it). It is a model of the cache,
// for choosing P and orders; prefetching changes when blocks are copied,
// not which.
func PlanUploads(seq [][3]int, rows, edges func(id int) int64, capacity int64, slots, horizon int) UploadPlan {
	type entry struct {
		id   int
		used uint64
	}
	var res []entry
	var held int64
	var plan UploadPlan
	bytesOf := func(id int) int64 { return BlockBytes(rows(id), edges(id)) }
	nextOf := func(from int, id int) int {
		for n := from; n < len(seq) && n < from+horizon; n++ {
			if s := seq[n]; s[0] == id || s[1] == id || s[2] == id {
				return n - from
			}
		}
		return never
	}
	for n, s := range seq {
		tick := uint64(n + 1)
		for _, id := range s {
			found := false
			for i := range res {
				if res[i].id == id {
					res[i].used = tick
					found = true
				}
			}
			if found {
				continue
			}
			need := bytesOf(id)
			for len(res) > 0 && (len(res) >= slots || held+need > capacity) {
				var cs []candidate
				for i, e := range res {
					if e.id == s[0] || e.id == s[1] || e.id == s[2] {
						continue // the subtask's own blocks stay
					}
					cs = append(cs, candidate{slot: i, next: nextOf(n+1, e.id), age: e.used})
				}
				v := pickVictim(cs)
				if v < 0 {
					break
				}
				held -= bytesOf(res[v].id)
				res = append(res[:v], res[v+1:]...)
			}
			res = append(res, entry{id: id, used: tick})
			held += need
			plan.Uploads++
			plan.Bytes += CopyBytes(rows(id), edges(id))
		}
	}
	return plan
}
