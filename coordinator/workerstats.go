package coordinator

import (
	"cmp"
	"slices"
	"time"

	"github.com/trigrid/trigrid/api"
)

// jobStats sums, per worker, the accepted attempts of a job's settled
// subtasks (api.WorkerStats). Each settled subtask adds its accepted
// attempt's times once; a count later overturned, or discarded with a
// faulty worker, is taken back out. The span of a worker's work
// (FirstStart, LastEnd) only widens. Run goroutine only.
type jobStats struct {
	byWorker map[api.WorkerID]*workerSums
}

type workerSums struct {
	s       api.WorkerStats
	devices map[int]*api.DeviceStats
}

// add adds (sign 1) or removes (sign -1) one accepted attempt of a
// subtask of edges edges whose result arrived at end.
func (js *jobStats) add(by SettledBy, edges int64, sign int) {
	if js.byWorker == nil {
		js.byWorker = map[api.WorkerID]*workerSums{}
	}
	w := js.byWorker[by.Worker]
	if w == nil {
		w = &workerSums{s: api.WorkerStats{Worker: by.Worker}, devices: map[int]*api.DeviceStats{}}
		js.byWorker[by.Worker] = w
	}
	t := by.Times
	k := time.Duration(sign)
	w.s.Subtasks += int64(sign)
	w.s.Edges += int64(sign) * edges
	w.s.Fetch += k * t.Fetch
	w.s.Decode += k * t.Decode
	w.s.Upload += k * t.Upload
	w.s.KernelTime += k * t.KernelTime
	w.s.Busy += k * t.Busy
	d := w.devices[t.Device]
	if d == nil {
		d = &api.DeviceStats{Device: t.Device}
		w.devices[t.Device] = d
	}
	d.Subtasks += int64(sign)
	d.Busy += k * t.Busy
	d.KernelTime += k * t.KernelTime
	d.Upload += k * t.Upload
	if sign > 0 && !by.End.IsZero() {
		start := by.End.Add(-(t.Fetch + t.Decode + t.Upload + t.KernelTime))
		if w.s.FirstStart.IsZero() || start.Before(w.s.FirstStart) {
			w.s.FirstStart = start
		}
		if by.End.After(w.s.LastEnd) {
			w.s.LastEnd = by.End
		}
	}
}

// snapshot returns the sums by worker name, each worker's devices by
// index; workers left with no accepted attempt are left out.
func (js *jobStats) snapshot() []api.WorkerStats {
	var out []api.WorkerStats
	for _, w := range js.byWorker {
		if w.s.Subtasks <= 0 {
			continue
		}
		s := w.s
		if !s.FirstStart.IsZero() {
			s.Wall = s.LastEnd.Sub(s.FirstStart)
		}
		for _, d := range w.devices {
			if d.Subtasks > 0 {
				s.Devices = append(s.Devices, *d)
			}
		}
		slices.SortFunc(s.Devices, func(a, b api.DeviceStats) int { return cmp.Compare(a.Device, b.Device) })
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b api.WorkerStats) int { return cmp.Compare(a.Worker, b.Worker) })
	return out
}
