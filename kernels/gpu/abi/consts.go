package abi

// Mirrors of trigrid.h's constants and macros; header_test.go holds each
// equal to the header.

// Kernel ids (TG_KERNEL_*): the library's kernels by id, from 1; id 0 is
// not a kernel of the library.
var kernelNames = [...]string{"", "polak", "trix", "grouptc", "trust", "wetric"}

// KernelNames lists the library's kernels in id order (ids 1 on).
func KernelNames() []string { return append([]string(nil), kernelNames[1:]...) }

// KernelID is the TG_KERNEL_* id of a library kernel; false for any other
// name.
func KernelID(name string) (int32, bool) {
	for i, n := range kernelNames {
		if i > 0 && n == name {
			return int32(i), true
		}
	}
	return 0, false
}

// MaxSlots is TG_MAX_SLOTS: the block slots of a context.
const MaxSlots = 16

// Indices of the stats array of the preprocessing entries (TG_PREP_*).
const (
	PrepVertices = iota
	PrepInputPairs
	PrepSelfLoops
	PrepDuplicates
	PrepEdges
	PrepWedges
	PrepMaxDegree
	PrepMaxForward
	PrepIsolated
	PrepNStats
)

// PrepStats is the stats array the preprocessing entries fill.
type PrepStats [PrepNStats]uint64

// RowsMaxSubtasks is TG_ROWS_MAX_SUBTASKS: the most subtasks one
// tg_count_rows call counts.
const RowsMaxSubtasks = 64

// Ops, flags and the least piece of tg_pieces_* (TG_PIECES_*).
const (
	PiecesPairs  = 0
	PiecesKeys   = 1
	PiecesOrient = 2

	PiecesUnique  = 1
	PiecesDegrees = 2

	PiecesMinItems = 1024
)

// RangesBitmapMinLen is TG_RANGES_BM_MINLEN: the fewest columns of a row
// with a bitmap in a count in ranges; RangesBitmapMaxRatio is
// TG_RANGES_BM_MAX_RATIO, the largest ratio tg_ranges_begin takes.
const (
	RangesBitmapMinLen   = 8
	RangesBitmapMaxRatio = 4096
)

// RangesBitmapWords is tg_ranges_bm_words: the bitmap words of a row of
// n columns from lo to hi under ratio, 0 when it has none.
func RangesBitmapWords(n int64, lo, hi uint32, ratio uint32) int64 {
	if n < RangesBitmapMinLen || hi < lo || int64(hi-lo)+1 > n*int64(ratio) {
		return 0
	}
	return (int64(hi-lo) + 32) / 32
}

// RangesBytes is tg_ranges_bytes: the work area a range of nrows rows,
// ncols columns and words bitmap words takes on the device (the check
// words; the offsets and the bitmaps' offsets, a word a row each, together
// in 256-byte granules; each row's first column in the window and the
// columns, together in granules; then the bitmaps).
func RangesBytes(nrows, ncols, words int64) int64 {
	return 256 + granules((nrows+1)*8) + granules((nrows+ncols)*4) + words*4
}

// granules is n bytes rounded up to whole 256-byte granules
// (tg_ranges_granules).
func granules(n int64) int64 { return (n + 255) &^ 255 }
