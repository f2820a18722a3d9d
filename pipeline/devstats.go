package pipeline

import (
	"sync"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/worker"
)

// DeviceReport is what the counters of a partitioned run did on their
// devices (GPUs); absent when no counter runs on one.
type DeviceReport struct {
	// PeakBytes is the device-memory high-water mark of the busiest
	// counter (each counter holds one device context).
	PeakBytes uint64 `json:"peak_bytes"`
	// CopiedBytes is what all counters copied to their devices.
	CopiedBytes uint64 `json:"copied_bytes"`
	// Uploads counts the blocks copied.
	Uploads int `json:"uploads"`
	// UploadsAhead counts the uploads made for a later subtask while an
	// earlier one counted, their copies overlapping its kernel.
	UploadsAhead int `json:"uploads_ahead"`
	// UploadsPinned counts the uploads from host memory pinned in place,
	// copied on a copy stream at the bus's rate.
	UploadsPinned int `json:"uploads_pinned"`
	// StallSeconds is the time the counters spent making blocks resident
	// before their kernels (summed over counters).
	StallSeconds float64 `json:"stall_seconds"`
	// CallSeconds is the time the counters spent in the library's count
	// calls: kernels, their launches and set-up, streamed ranges' copies
	// (summed over counters).
	CallSeconds float64 `json:"call_seconds"`
	// Splits counts subtasks (or parts) counted in two halves because they
	// did not fit a device whole.
	Splits int `json:"splits"`
	// StreamedSubtasks counts subtasks counted with JK resident and IJ, IK
	// streamed in row ranges beside the kernel (StreamRanges ranges).
	StreamedSubtasks int `json:"streamed_subtasks,omitempty"`
	StreamRanges     int `json:"stream_ranges,omitempty"`
	// RowRanges counts the row ranges of a whole graph counted with its
	// columns in host memory (kernels.RangeCounter); MappedBytes is what
	// their kernels read from host memory over the bus.
	RowRanges   int    `json:"row_ranges,omitempty"`
	MappedBytes uint64 `json:"mapped_bytes,omitempty"`
	// IdleShare is the share of the count phase during which the devices
	// ran no kernel: 1 - kernel time / (count time x counters).
	IdleShare float64 `json:"idle_share"`
}

// deviceTally keeps the counters a run makes that report device figures.
type deviceTally struct {
	mu       sync.Mutex
	counters []kernels.Device
}

// wrap makes slot's counters known to the tally.
func (d *deviceTally) wrap(slot worker.Slot) worker.Slot {
	next := slot.NewCounter
	slot.NewCounter = func(kernel string) (kernels.Counter, error) {
		c, err := next(kernel)
		if dr, ok := c.(kernels.Device); ok && err == nil {
			d.mu.Lock()
			d.counters = append(d.counters, dr)
			d.mu.Unlock()
		}
		return c, err
	}
	return slot
}

// report sums the counters' figures over a count phase of countSeconds.
func (d *deviceTally) report(countSeconds float64) *DeviceReport {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.counters) == 0 {
		return nil
	}
	r := &DeviceReport{}
	var busy float64
	for _, c := range d.counters {
		s := c.DeviceStats()
		r.PeakBytes = max(r.PeakBytes, s.PeakBytes)
		r.CopiedBytes += s.CopiedBytes
		r.Uploads += s.Uploads
		r.UploadsAhead += s.Ahead
		r.UploadsPinned += s.PinnedUploads
		r.StallSeconds += s.Stalled.Seconds()
		r.CallSeconds += s.Calls.Seconds()
		r.Splits += s.Splits
		r.StreamedSubtasks += s.Streamed
		r.StreamRanges += s.Ranges
		busy += s.Busy.Seconds()
	}
	if countSeconds > 0 {
		r.IdleShare = max(0, 1-busy/(countSeconds*float64(len(d.counters))))
	}
	return r
}
