package kernels

import "time"

// DeviceStats are the figures of a counter that runs on a device with
// memory of its own (a GPU), for reports.
type DeviceStats struct {
	// PeakBytes is the most device memory the counter held; UsedBytes what
	// it holds now (blocks kept for reuse, scratch), 0 once closed.
	PeakBytes, UsedBytes uint64
	// CopiedBytes is what the counter copied to the device (blocks).
	CopiedBytes uint64
	// Uploads counts the blocks copied.
	Uploads int
	// Ahead counts the uploads made for a later subtask while an earlier
	// one counted (Subtask.Ahead), beside its kernel.
	Ahead int
	// PinnedUploads counts the uploads from host memory pinned in place,
	// copied on a copy stream (the others are copied from pageable memory
	// before the kernel).
	PinnedUploads int
	// Splits counts subtasks (or parts of them) counted in two halves
	// because they did not fit the device's memory whole.
	Splits int
	// Busy is the device time of the counts (kernel time).
	Busy time.Duration
	// Streamed counts subtasks counted with JK resident and IJ, IK streamed
	// in row ranges beside the kernel; Ranges counts their ranges.
	Streamed, Ranges int
	// Calls is the host time spent in the library's count calls (the
	// kernels, their launches and set-up, and the copies of streamed
	// ranges).
	Calls time.Duration
	// Stalled is the host time spent making a subtask's blocks resident
	// (uploads, pinning) and starting the next subtasks' uploads, before
	// its kernel: the device runs none of the counter's kernels meanwhile.
	Stalled time.Duration
}
