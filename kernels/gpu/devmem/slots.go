package devmem

import (
	"errors"
	"fmt"
	"time"
	"weak"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// ResidentSlot holds a graph built on the device (a preprocessing's
// forward graph): while it is marked resident (SetResident), no block is
// loaded into it and nothing gives it up for room.
const ResidentSlot = abi.MaxSlots - 1

// maxAhead is how many of the next subtasks Prefetch uploads blocks for.
const maxAhead = 2

// Keep marks the slots not to give up or load into.
type Keep [abi.MaxSlots]bool

// slot remembers which block a device slot holds. The block is held
// weakly: a block the caller dropped can be collected, and its slot is
// then simply reused. Blocks must not be modified while a context may
// still hold them (shards and CSR views are immutable in trigrid).
type slot struct {
	block weak.Pointer[graph.CSR]
	nOff  int
	nCols int
	ncols int64
	used  uint64 // last use, for eviction
	// loaded: the library's slot holds device memory (a block that was
	// collected on the host still occupies it until released).
	loaded bool
	// pending: loaded asynchronously from the pinned block from, and not
	// yet completed by the library (Settle).
	pending bool
	from    *graph.CSR
}

// SlotStats are a slot table's uploads so far.
type SlotStats struct {
	Uploads int    // blocks copied to the device
	Ahead   int    // of them for a later subtask, beside a kernel (Prefetch)
	Pinned  int    // of them from pinned blocks, asynchronously
	Copied  uint64 // bytes they copied (CopyBytes)
	// Pinning is the time Ready spent page-locking blocks on the way to
	// a kernel: the host's work, not the uploads' (stage.go).
	Pinning time.Duration
}

// Slots is a context's block slots used as a cache of blocks: a block
// passed again (the same *graph.CSR, unchanged in size) is not uploaded
// again. When a block must be loaded, the slot to give up is the one whose
// block the known next subtasks (kernels.Subtask.Ahead) need furthest
// ahead (pickVictim); blocks are uploaded from their own memory pinned in
// place (Pins) where they can be, and the next subtasks' blocks ahead of
// them (Prefetch). Slots is not safe for concurrent use: its owner
// serializes calls, as it does for the context.
type Slots struct {
	ctx   *abi.Ctx
	pins  *Pins
	slots [abi.MaxSlots]slot
	tick  uint64
	// resident: ResidentSlot holds a graph built on the device.
	resident bool
	// cut: the blocks loaded are cut for one count (row ranges, chunks):
	// they are uploaded from pageable memory, never pinned.
	cut   bool
	stats SlotStats
	// lookups, when set, hears every block a count asks For: a hit when
	// the block was resident or on its way (kernels.CacheCounter).
	lookups kernels.CacheCounter
}

// NewSlots is the slot table of ctx, pinning blocks through pins.
func NewSlots(ctx *abi.Ctx, pins *Pins) *Slots { return &Slots{ctx: ctx, pins: pins} }

// Stats reports the uploads so far.
func (s *Slots) Stats() SlotStats { return s.stats }

// SetLookups makes c hear each block a count asks For.
func (s *Slots) SetLookups(c kernels.CacheCounter) { s.lookups = c }

// SetResident marks whether ResidentSlot holds a graph built on the
// device.
func (s *Slots) SetResident(on bool) { s.resident = on }

// Resident reports whether ResidentSlot holds a graph built on the device.
func (s *Slots) Resident() bool { return s.resident }

// SetCut sets whether the blocks loaded from now on are cut for one count
// (never pinned: they are not uploaded again) and returns the setting it
// replaces.
func (s *Slots) SetCut(on bool) (was bool) {
	was, s.cut = s.cut, on
	return was
}

// Drop forgets what slot i holds, its device memory released or handed to
// the library.
func (s *Slots) Drop(i int) { s.slots[i] = slot{} }

// Broken records that slot i holds device memory but no block (a failed
// load or preprocessing): ReleaseIdle may free it.
func (s *Slots) Broken(i int) { s.slots[i] = slot{loaded: true} }

// Free releases slot i's device memory (tg_free_block) and forgets it; an
// error from the library is returned, the slot forgotten all the same.
func (s *Slots) Free(i int) error {
	err := s.ctx.FreeBlock(int32(i))
	s.Settle(i)
	s.slots[i] = slot{}
	return err
}

// Wait completes slot i's pending load, if any, and records it settled;
// what the load reports is the caller's to learn from the call that next
// uses the slot.
func (s *Slots) Wait(i int) {
	if s.slots[i].pending {
		_ = s.ctx.LoadWait(int32(i))
		s.Settle(i)
	}
}

// Settle records that the library has completed (or dropped) slot i's
// pending load: its pinned block is no longer read by it.
func (s *Slots) Settle(i int) {
	sl := &s.slots[i]
	if sl.pending {
		s.pins.EndLoad(sl.from)
		sl.pending, sl.from = false, nil
	}
}

// SettleAll settles every slot, once the context is destroyed (which
// completes every pending load).
func (s *Slots) SettleAll() {
	for i := range s.slots {
		s.Settle(i)
	}
}

// Hold records that slots[k] holds blocks[k], made there by the library
// (a device split), as used now.
func (s *Slots) Hold(slots []int32, blocks []*graph.CSR) {
	s.tick++
	for k, b := range blocks {
		s.slots[slots[k]] = slot{block: weak.Make(b), nOff: len(b.Offsets), nCols: len(b.Cols), ncols: b.NCols, used: s.tick, loaded: true}
	}
}

// Find returns the slot holding b, or -1.
func (s *Slots) Find(b *graph.CSR) int {
	for i := range s.slots {
		sl := &s.slots[i]
		if sl.block.Value() == b && sl.nOff == len(b.Offsets) && sl.nCols == len(b.Cols) && sl.ncols == b.NCols {
			return i
		}
	}
	return -1
}

// Ready makes t's three blocks resident and their loads complete (copied,
// checked, indexed while the memory is not yet taken by blocks uploaded
// ahead), then starts the uploads of the next subtasks' blocks
// (Prefetch). It returns the three slots and the slots not to give up
// while t counts.
func (s *Slots) Ready(t kernels.Subtask) ([3]int32, Keep, error) {
	var sl [3]int32
	var keep Keep
	for i, b := range []*graph.CSR{t.IJ, t.IK, t.JK} {
		var err error
		if sl[i], err = s.For(b, &keep, t); err != nil {
			return sl, keep, err
		}
	}
	if err := s.Complete(sl); err != nil {
		return sl, keep, err
	}
	s.Prefetch(t, keep)
	return sl, keep, nil
}

// Alone makes b resident with every other slot given up: into the buffers
// of a loaded slot (an earlier block's) when b is not resident and there
// is one, since a new allocation would take the memory the caller wants
// beside b.
func (s *Slots) Alone(b *graph.CSR, t kernels.Subtask) (int32, error) {
	var keep Keep
	if s.Find(b) < 0 && s.LoadedVictim(&keep, t.Ahead) >= 0 {
		for i := range s.slots {
			keep[i] = !s.slots[i].loaded
		}
	}
	i, err := s.For(b, &keep, t)
	if err != nil {
		return 0, err
	}
	for s.ReleaseIdle(&keep, nil) {
	}
	return i, s.Complete([3]int32{i, i, i})
}

// Complete completes the pending loads of slots sl (tg_load_wait). A slot
// whose load failed (a malformed block) holds no block after it.
func (s *Slots) Complete(sl [3]int32) error {
	var first error
	for _, i := range sl {
		if !s.slots[i].pending {
			continue
		}
		err := s.ctx.LoadWait(i)
		s.Settle(int(i))
		if err != nil {
			if !errors.Is(err, abi.ErrOutOfMemory) {
				s.Broken(int(i))
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// Counted records the outcome err of a call that counted slots sl and
// completed their pending loads up to the first that failed: the rest are
// completed, and after an error other than one of memory the three hold
// no block (a block the library found malformed is not resident; their
// memory stays for ReleaseIdle).
func (s *Slots) Counted(sl [3]int32, err error) {
	for _, i := range sl {
		if s.slots[i].pending && err != nil {
			_ = s.ctx.LoadWait(i)
		}
		s.Settle(int(i))
	}
	if err != nil && !errors.Is(err, abi.ErrOutOfMemory) {
		for _, i := range sl {
			s.Broken(int(i))
		}
	}
}

// For returns the slot holding b, uploading it when it is not resident
// into the slot Victim chooses among those keep does not mark. When
// memory runs out it releases idle slots and tries again. The slot is
// marked in keep.
func (s *Slots) For(b *graph.CSR, keep *Keep, t kernels.Subtask) (int32, error) {
	s.tick++
	i := s.Find(b)
	if s.lookups != nil {
		s.lookups.Lookup(i >= 0)
	}
	if i >= 0 {
		s.slots[i].used = s.tick
		keep[i] = true
		return int32(i), nil
	}
	v := s.Victim(keep, t.Ahead)
	if v < 0 {
		return 0, fmt.Errorf("no free slot")
	}
	for {
		err := s.upload(v, b, t)
		if err == nil {
			break
		}
		// A failed load may leave buffers in the slot: it stays loaded
		// (holding memory, no block) so that ReleaseIdle can free it.
		s.Broken(v)
		keep[v] = true // the slot being loaded is not released for room
		again := errors.Is(err, abi.ErrOutOfMemory) && s.ReleaseIdle(keep, t.Ahead)
		keep[v] = false
		if !again {
			return 0, err
		}
	}
	keep[v] = true
	return int32(v), nil
}

// Victim is the slot to load into: among those keep does not mark (nor
// the resident graph's), pickVictim's choice with ahead known. -1 when
// every slot is kept.
func (s *Slots) Victim(keep *Keep, ahead []kernels.Subtask) int {
	return s.pick(keep, ahead, false)
}

// LoadedVictim is Victim among the loaded slots; -1 when there is none.
func (s *Slots) LoadedVictim(keep *Keep, ahead []kernels.Subtask) int {
	return s.pick(keep, ahead, true)
}

func (s *Slots) pick(keep *Keep, ahead []kernels.Subtask, loaded bool) int {
	var cs [abi.MaxSlots]candidate
	n := 0
	for i := range s.slots {
		if keep[i] || s.resident && i == ResidentSlot || loaded && !s.slots[i].loaded {
			continue
		}
		cs[n] = s.candidate(i, ahead)
		n++
	}
	return pickVictim(cs[:n])
}

func (s *Slots) candidate(i int, ahead []kernels.Subtask) candidate {
	b := s.slots[i].block.Value()
	if b == nil {
		return candidate{slot: i, next: never}
	}
	return candidate{slot: i, next: nextUse(ahead, b), age: s.slots[i].used}
}

// upload copies b into slot i: from b itself, pinned in place, without
// waiting (the load completes in the count that reads it), or
// synchronously from pageable memory when b cannot be pinned (too small,
// no room, refused, or cut for one count).
func (s *Slots) upload(i int, b *graph.CSR, t kernels.Subtask) error {
	// The library completes a replaced pending load before reusing the
	// slot's buffers; waiting here keeps the count of the pinned block's
	// readers exact.
	s.Wait(i)
	async := !s.cut && s.timedPin(func() bool { return s.pins.StartLoad(b, s.Keeper(t)) })
	if err := s.ctx.LoadBlock(int32(i), b.Offsets, b.Cols, b.NCols, async); err != nil {
		if async {
			s.pins.EndLoad(b)
		}
		return err
	}
	s.stats.Copied += uint64(CopyBytes(b.NumRows(), b.NumEdges()))
	s.stats.Uploads++
	s.slots[i] = slot{block: weak.Make(b), nOff: len(b.Offsets), nCols: len(b.Cols), ncols: b.NCols, used: s.tick, loaded: true}
	if async {
		s.stats.Pinned++
		s.slots[i].pending, s.slots[i].from = true, b
	}
	return nil
}

// Keeper tells the pin registry which blocks are needed soon (t's and the
// known next subtasks'): they are not given up for room.
func (s *Slots) Keeper(t kernels.Subtask) func(*graph.CSR) bool {
	return func(x *graph.CSR) bool {
		return x == t.IJ || x == t.IK || x == t.JK || nextUse(t.Ahead, x) != never
	}
}

// Prefetch uploads the blocks of the next subtasks (t.Ahead), in order,
// when they can be pinned: into free memory, or into the slot of a block
// needed later than the one uploaded (never one keep marks) when that
// makes room. It stops at the first block it cannot upload so. The
// uploads are asynchronous: their copies run beside t's kernel.
func (s *Slots) Prefetch(t kernels.Subtask, keep Keep) {
	if s.pins.Limit() <= 0 {
		return
	}
	used, limit, _ := s.ctx.MemUsage()
	for n, a := range t.Ahead[:min(len(t.Ahead), maxAhead)] {
		for _, b := range []*graph.CSR{a.IJ, a.IK, a.JK} {
			if b == nil {
				return
			}
			if i := s.Find(b); i >= 0 {
				keep[i] = true
				continue
			}
			if !s.timedPin(func() bool { return s.pins.Pin(b, s.Keeper(t)) }) {
				return // a later subtask uploads it from pageable memory
			}
			// Free memory, else the buffers of one block needed later than
			// this one, reused in place (freeing several would cost device
			// synchronizations and allocations on the way to the kernel).
			need := uint64(BlockBytes(b.NumRows(), b.NumEdges()))
			v := -1
			if used+need <= limit {
				v = s.Victim(&keep, t.Ahead)
			} else if lv := s.LoadedVictim(&keep, t.Ahead); lv >= 0 && s.candidate(lv, t.Ahead).next > n {
				ls := &s.slots[lv]
				if used+need <= limit+uint64(BlockBytes(int64(ls.nOff-1), int64(ls.nCols))) {
					v = lv
				}
			}
			if v < 0 {
				return
			}
			s.tick++
			if err := s.upload(v, b, t); err != nil {
				s.Broken(v)
				return
			}
			s.stats.Ahead++
			keep[v] = true
			used, _, _ = s.ctx.MemUsage()
		}
	}
}

// Stage pins the blocks of the next subtasks that are not resident, so
// that a later Prefetch uploads them without pinning them on the way to
// the kernel. It may run while a kernel does: it touches the pin registry
// only (registration needs no context).
func (s *Slots) Stage(t kernels.Subtask) {
	s.StageList(s.Keeper(t), t.Ahead[:min(len(t.Ahead), maxAhead+1)])
}

// StageList is Stage for the subtasks of list, with keep telling the
// registry which blocks not to give up.
func (s *Slots) StageList(keep func(*graph.CSR) bool, list []kernels.Subtask) {
	for _, a := range list {
		for _, b := range []*graph.CSR{a.IJ, a.IK, a.JK} {
			if b == nil || s.Find(b) >= 0 || !s.pins.Pinnable(b) {
				continue
			}
			if !s.pins.Pin(b, keep) {
				return
			}
		}
	}
}

// ReleaseIdle frees the loaded slot keep does not mark (nor the resident
// graph's) whose block is needed furthest ahead, and reports whether there
// was one.
func (s *Slots) ReleaseIdle(keep *Keep, ahead []kernels.Subtask) bool {
	v := s.LoadedVictim(keep, ahead)
	if v < 0 {
		return false
	}
	_ = s.Free(v)
	return true
}

// ReleaseAll frees every loaded slot but the resident graph's, and
// reports whether there was one.
func (s *Slots) ReleaseAll() bool {
	var none Keep
	any := false
	for s.ReleaseIdle(&none, nil) {
		any = true
	}
	return any
}
