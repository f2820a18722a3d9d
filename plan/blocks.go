package plan

import "fmt"

// Choices made once a partitioned count's blocks are known: the P of
// `--partitions 0` and whether one GPU streams the rows of its blocks.
// Like Choose, both are pure: the memory and speed models that give their
// figures stay with the caller.

// PRequest is what ChooseP decides from.
type PRequest struct {
	// Fit is the smallest P whose largest subtask fits the budget.
	Fit int
	// Modelled: one GPU counts every subtask of a hash partition, and
	// Seconds models its count phase at a P.
	Modelled bool
	Seconds  func(p int) float64
	// Useful is the largest P whose blocks are not too small to be worth
	// a subtask (partition.UsefulP).
	Useful int
}

// MaxModelledP bounds the P ChooseP models (32^3 subtasks).
const MaxModelledP = 32

// ChooseP chooses the P of `--partitions 0`: the smallest that fits,
// unless a larger one up to twice that (and r.Useful, MaxModelledP) has a
// modelled count phase shorter by a quarter. The margin is there because
// the model leaves out what grows with P (partitioning) and its rates are
// rough.
func ChooseP(r PRequest) (int, Reason) {
	fit := Reason{Choice: fmt.Sprintf("p=%d", r.Fit), Record: recPinned,
		Why: "--partitions 0: the smallest P whose largest subtask fits the budget"}
	if !r.Modelled || r.Seconds == nil || r.Fit >= MaxModelledP {
		return r.Fit, fit
	}
	best, bestSec := r.Fit, r.Seconds(r.Fit)
	for p := r.Fit + 1; p <= 2*r.Fit && p <= MaxModelledP && p <= r.Useful; p++ {
		if s := r.Seconds(p); s < 0.75*bestSec {
			best, bestSec = p, s
		}
	}
	if best == r.Fit {
		fit.Why += "; no larger P up to twice it is modelled a quarter faster on one GPU"
		return best, fit
	}
	return best, Reason{Choice: fmt.Sprintf("p=%d", best), Record: recPinned,
		Why: fmt.Sprintf("--partitions 0 on one GPU: P %d (the smallest that fits is %d) has the shortest modelled count phase, by more than a quarter: blocks small enough for their indexes to stay beside the subtask's", best, r.Fit)}
}

// StreamMode is how a count on one GPU streams rows (--row-stream).
type StreamMode string

// The stream modes.
const (
	StreamAuto StreamMode = "auto"
	StreamOn   StreamMode = "on"
	StreamOff  StreamMode = "off"
)

// BlockFigures are the figures of a partitioned count's blocks on its device.
type BlockFigures struct {
	// OneGPU: one GPU counts every subtask.
	OneGPU bool
	// LargestBytes is the device memory of the largest block (its offsets
	// and columns).
	LargestBytes uint64
	// Budget is the device memory the count may use (0: not known);
	// ContextBytes what the device's context takes of it and IndexShare
	// a block's index as a share of the block.
	Budget       uint64
	ContextBytes uint64
	IndexShare   float64
}

// ChooseRowStream decides whether one GPU keeps only each subtask's JK
// block resident, with its index, and streams IJ and IK in row ranges: as
// mode asks, and in auto when the budget holds JK with its index, the
// kernel's scratch reserve (a sixteenth of the room) and two sets of
// ranges of an eighth of a block each, but not the three blocks and the
// index.
func ChooseRowStream(b BlockFigures, mode StreamMode) (bool, Reason) {
	off := func(why string) (bool, Reason) {
		return false, Reason{Choice: "row-stream=off", Why: why, Record: recRanges}
	}
	switch {
	case !b.OneGPU:
		return off("not one GPU counting every subtask: each subtask's three blocks are resident")
	case mode == StreamOff:
		return off("--row-stream off")
	case mode == StreamOn:
		return true, Reason{Choice: "row-stream=on", Why: "--row-stream on", Record: recRanges}
	case b.Budget == 0:
		return off("no device budget known: each subtask's three blocks are resident")
	}
	room := float64(b.Budget) - float64(b.ContextBytes)
	blk := float64(b.LargestBytes)
	whole := (3 + b.IndexShare) * blk
	streamed := (1+b.IndexShare)*blk + room/16 + 2*blk/4
	switch {
	case whole <= room:
		return off(fmt.Sprintf("the largest subtask's three blocks with an index (%.0f bytes) fit the device's %.0f", whole, room))
	case streamed > room:
		return off(fmt.Sprintf("even streamed, the largest block with its index and ranges (%.0f bytes) exceeds the device's %.0f: the blocks go through the device pinned in place", streamed, room))
	}
	return true, Reason{Choice: "row-stream=on", Record: recRanges,
		Why: fmt.Sprintf("the largest subtask's three blocks with an index (%.0f bytes) exceed the device's %.0f, its JK block with index and two sets of row ranges (%.0f) fit: IJ and IK stream in row ranges", whole, room, streamed)}
}
