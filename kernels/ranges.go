package kernels

import (
	"context"
	"time"

	"github.com/trigrid/trigrid/graph"
)

// RangeCounter is a Counter whose device counts a forward graph larger
// than its memory: the graph stays in host memory and the device holds a
// range of its rows at a time, reading the rest over the bus. Callers ask
// for it with a type assertion and count in blocks without it.
type RangeCounter interface {
	Counter
	// CountInRanges counts the whole forward graph fwd (kernels.Whole's
	// subtask). An error for which DoesNotFit is true means the device
	// cannot hold even the graph's longest row; the caller counts in
	// blocks instead.
	CountInRanges(ctx context.Context, fwd *graph.CSR, opts RangeOptions) (Result, RangeStats, error)
	DoesNotFit(err error) bool
}

// RangeOptions are a count in ranges' choices beyond the graph.
type RangeOptions struct {
	// Listed, when not nil, is called once, on any goroutine, when the
	// host has listed every range: its share of the count is done and the
	// device counts on. A count that ends before that never calls it.
	Listed func()
}

// RangeStats describes a count in row ranges.
type RangeStats struct {
	// Ranges is the number of row ranges; Entries the rows' shares of
	// them that the kernels read from host memory.
	Ranges  int
	Entries int64
	// AreaBytes is the device's work area; ResidentBytes the bytes copied
	// into it (every row's offsets, bitmap offsets and columns once);
	// BitmapBytes the dense rows' bitmaps built in it, under BitmapRatio
	// (tg_ranges_bm_words; 0: none); MappedBytes the
	// bytes the kernels read from host memory over the bus (entries and
	// their columns).
	AreaBytes     int64
	ResidentBytes int64
	BitmapBytes   int64
	BitmapRatio   uint32
	MappedBytes   int64
	// Setup is the host's time checking the offsets, laying out the
	// bitmaps and cutting the ranges; Prepare its time listing the first
	// range's entries (the others are listed while the device counts);
	// Pin the time waiting on the host arrays' page-locking (not the
	// columns' when PinnedCols: they were pinned already; not the sides'
	// when PinnedSides: the listings went into host memory pinned before)
	// and on their release where the count waits for it.
	Setup       time.Duration
	Prepare     time.Duration
	Pin         time.Duration
	PinnedCols  bool
	PinnedSides bool
}
