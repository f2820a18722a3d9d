package pb

import (
	"fmt"
	"time"

	"github.com/trigrid/trigrid/api"
)

// encodeWorkerStats converts a job's per-worker sums, at most
// api.MaxWorkerStats of them.
func encodeWorkerStats(ws []api.WorkerStats) []*WorkerStats {
	if len(ws) == 0 {
		return nil
	}
	out := make([]*WorkerStats, 0, min(len(ws), api.MaxWorkerStats))
	for _, w := range ws[:min(len(ws), api.MaxWorkerStats)] {
		m := &WorkerStats{
			Worker: string(w.Worker), Subtasks: w.Subtasks,
			FetchNs: int64(w.Fetch), DecodeNs: int64(w.Decode), UploadNs: int64(w.Upload),
			KernelNs: int64(w.KernelTime), BusyNs: int64(w.Busy), WallNs: int64(w.Wall), Edges: w.Edges,
		}
		if !w.FirstStart.IsZero() {
			m.FirstStartUnixMs = w.FirstStart.UnixMilli()
		}
		if !w.LastEnd.IsZero() {
			m.LastEndUnixMs = w.LastEnd.UnixMilli()
		}
		for _, d := range w.Devices[:min(len(w.Devices), api.MaxDevices)] {
			m.Devices = append(m.Devices, &DeviceStats{Device: int32(d.Device), Subtasks: d.Subtasks,
				BusyNs: int64(d.Busy), KernelNs: int64(d.KernelTime), UploadNs: int64(d.Upload)})
		}
		out = append(out, m)
	}
	return out
}

// decodeWorkerStats validates and converts a job's per-worker sums: named
// workers, no count or time negative, devices in 0..api.MaxDevices-1.
func decodeWorkerStats(ms []*WorkerStats) ([]api.WorkerStats, error) {
	const msg = "JobStatus"
	if err := checkRange(msg, "per_worker", int64(len(ms)), 0, api.MaxWorkerStats); err != nil {
		return nil, err
	}
	var out []api.WorkerStats
	for i, m := range ms {
		w, err := decodeOneWorkerStats(msg, fmt.Sprintf("per_worker[%d]", i), m)
		if err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, nil
}

// decodeOneWorkerStats validates and converts one worker's sums, field
// of message msg.
func decodeOneWorkerStats(msg, field string, m *WorkerStats) (api.WorkerStats, error) {
	if m == nil {
		return api.WorkerStats{}, fieldErr(msg, field, ErrNil)
	}
	if err := api.CheckID("worker id", m.GetWorker()); err != nil {
		return api.WorkerStats{}, fieldErr(msg, field+".worker", err)
	}
	w := api.WorkerStats{Worker: api.WorkerID(m.GetWorker())}
	for _, c := range []struct {
		name string
		v    int64
		to   *time.Duration
	}{{"fetch_ns", m.GetFetchNs(), &w.Fetch}, {"decode_ns", m.GetDecodeNs(), &w.Decode}, {"upload_ns", m.GetUploadNs(), &w.Upload},
		{"kernel_ns", m.GetKernelNs(), &w.KernelTime}, {"busy_ns", m.GetBusyNs(), &w.Busy}, {"wall_ns", m.GetWallNs(), &w.Wall}} {
		d, err := checkDuration(msg, field+"."+c.name, c.v)
		if err != nil {
			return api.WorkerStats{}, err
		}
		*c.to = d
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"subtasks", m.GetSubtasks()}, {"edges", m.GetEdges()}, {"first_start_unix_ms", m.GetFirstStartUnixMs()}, {"last_end_unix_ms", m.GetLastEndUnixMs()}} {
		if c.v < 0 {
			return api.WorkerStats{}, fieldErr(msg, field+"."+c.name, fmt.Errorf("%d is negative", c.v))
		}
	}
	w.Subtasks, w.Edges = m.GetSubtasks(), m.GetEdges()
	if ms := m.GetFirstStartUnixMs(); ms != 0 {
		w.FirstStart = time.UnixMilli(ms)
	}
	if ms := m.GetLastEndUnixMs(); ms != 0 {
		w.LastEnd = time.UnixMilli(ms)
	}
	devs, err := decodeDeviceStats(msg, field, m.GetDevices())
	if err != nil {
		return api.WorkerStats{}, err
	}
	w.Devices = devs
	return w, nil
}

func decodeDeviceStats(msg, field string, ms []*DeviceStats) ([]api.DeviceStats, error) {
	if err := checkRange(msg, field+".devices", int64(len(ms)), 0, api.MaxDevices); err != nil {
		return nil, err
	}
	var out []api.DeviceStats
	for i, m := range ms {
		f := fmt.Sprintf("%s.devices[%d]", field, i)
		if m == nil {
			return nil, fieldErr(msg, f, ErrNil)
		}
		if err := checkRange(msg, f+".device", int64(m.GetDevice()), 0, api.MaxDevices-1); err != nil {
			return nil, err
		}
		if m.GetSubtasks() < 0 {
			return nil, fieldErr(msg, f+".subtasks", fmt.Errorf("%d is negative", m.GetSubtasks()))
		}
		d := api.DeviceStats{Device: int(m.GetDevice()), Subtasks: m.GetSubtasks()}
		for _, c := range []struct {
			name string
			v    int64
			to   *time.Duration
		}{{"busy_ns", m.GetBusyNs(), &d.Busy}, {"kernel_ns", m.GetKernelNs(), &d.KernelTime}, {"upload_ns", m.GetUploadNs(), &d.Upload}} {
			v, err := checkDuration(msg, f+"."+c.name, c.v)
			if err != nil {
				return nil, err
			}
			*c.to = v
		}
		out = append(out, d)
	}
	return out, nil
}
