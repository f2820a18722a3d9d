package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/worker"
)

// wantsRowRanges reports whether a count in mode of a forward graph its
// device cannot hold whole goes in row ranges: for StreamOn and
// StreamAuto. Ranges cost no split of the forward graph and, at caps that
// need two ranges, beat blocks by far
// (docs/decisions/2026-11-24-row-ranges-over-blocks.md).
func wantsRowRanges(mode StreamMode) bool { return mode != StreamOff }

// countInRanges counts the whole forward graph fwd, which the device does
// not hold, with its columns in host memory and a range of its rows on the
// device at a time (kernels.RangeCounter). An error for which
// rc.DoesNotFit is true leaves rep as it was: the caller counts in blocks.
func countInRanges(ctx context.Context, fwd *graph.CSR, rc kernels.RangeCounter, cfg *Config, rep *Report) error {
	t := time.Now()
	cfg.Progress.Start("count", "", -1)
	// What building fwd left behind (the pieces' second array, the
	// compaction's tables) goes back to the operating system while the
	// device counts, rather than at the process's exit: once the host has
	// listed the ranges, since beside the set-up and the listings it would
	// slow them; after a count that ended first, before returning.
	var once sync.Once
	released := func() {}
	release := func() { once.Do(func() { released = freeWhileCounting() }) }
	res, st, err := rc.CountInRanges(ctx, fwd, kernels.RangeOptions{Listed: release})
	counted := since(t)
	release()
	tr := time.Now()
	released()
	cfg.Logger.Debug("count in row ranges: memory released", "wait_seconds", since(tr))
	cfg.Progress.Done()
	if err != nil {
		if rc.DoesNotFit(err) {
			return err
		}
		return fmt.Errorf("count with %s in row ranges: %w", rc.Name(), err)
	}
	rep.Triangles = res.Triangles
	rep.Kernel = worker.KernelName(rc)
	rep.Seconds.Count = counted // the release's wait counts in the total only
	rep.Seconds.Kernel = res.KernelTime.Seconds()
	dm := &DeviceReport{RowRanges: st.Ranges, MappedBytes: uint64(st.MappedBytes), CopiedBytes: uint64(st.ResidentBytes),
		CallSeconds: rep.Seconds.Count - st.Setup.Seconds() - st.Prepare.Seconds() - st.Pin.Seconds()}
	if dr, ok := rc.(kernels.Device); ok {
		dm.PeakBytes = dr.DeviceStats().PeakBytes
	}
	if rep.Seconds.Count > 0 {
		dm.IdleShare = max(0, 1-rep.Seconds.Kernel/rep.Seconds.Count)
	}
	rep.DeviceMemory = dm
	cfg.Logger.Debug("counted in row ranges", "ranges", st.Ranges, "entries", st.Entries, "area_bytes", st.AreaBytes,
		"resident_bytes", st.ResidentBytes, "bitmap_bytes", st.BitmapBytes, "bitmap_ratio", st.BitmapRatio, "mapped_bytes", st.MappedBytes, "setup_seconds", st.Setup.Seconds(), "prepare_seconds", st.Prepare.Seconds(),
		"pin_seconds", st.Pin.Seconds(), "cols_pinned_before", st.PinnedCols, "sides_pinned_before", st.PinnedSides, "kernel_seconds", rep.Seconds.Kernel, "seconds", rep.Seconds.Count)
	if cfg.Verify {
		return verify(ctx, kernels.Whole(fwd), res.Triangles, rc.Name(), rep)
	}
	return nil
}
