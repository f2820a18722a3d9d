package dashboard

import (
	"net"
	"time"

	"github.com/trigrid/trigrid/api"
)

// Worker is one worker's row. Times are seconds summed over the jobs the
// coordinator holds.
type Worker struct {
	ID      string   `json:"id"`
	Host    string   `json:"host"`
	Version string   `json:"version"`
	Devices []Device `json:"devices"`
	Cores   int      `json:"cores"`
	Slots   int      `json:"slots"`
	// State is busy, idle, draining or lost.
	State string `json:"state"`
	// Running attempts now; Done (counted) and Failed results over its
	// connection.
	Running int    `json:"running"`
	Done    int    `json:"done"`
	Failed  int    `json:"failed"`
	Faulty  string `json:"faulty,omitempty"`
	Left    string `json:"left,omitempty"`
	// HeartbeatAgeSeconds is how long ago it was last heard from (for a
	// worker that left, how long ago it left).
	HeartbeatAgeSeconds float64 `json:"heartbeat_age_seconds"`
	// Accepted subtasks (each once) and their times.
	Subtasks      int64   `json:"subtasks"`
	KernelSeconds float64 `json:"kernel_seconds"`
	FetchSeconds  float64 `json:"fetch_seconds"`
	DecodeSeconds float64 `json:"decode_seconds"`
	UploadSeconds float64 `json:"upload_seconds"`
	BusySeconds   float64 `json:"busy_seconds"`
	// EdgesPerSecond is its accepted subtasks' edges over the time it
	// spent on them (the sum of its spans per job); BusyShare the share
	// of that time its devices were busy (busy time over span times
	// slots). Null until it has an accepted subtask.
	EdgesPerSecond *float64 `json:"edges_per_second"`
	BusyShare      *float64 `json:"busy_share"`
}

// Device is one counting device of a worker.
type Device struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Memory int64  `json:"memory"`
}

// Workers returns the connected workers in join order, then the latest
// that left (lost), the most recent first.
func Workers(in Input) []api.WorkerInfo {
	stats := perWorker(in.Jobs)
	out := make([]api.WorkerInfo, 0, len(in.Workers)+len(in.Departed))
	for _, w := range in.Workers {
		ws := w.Status
		h := ws.Hello
		wi := api.WorkerInfo{Worker: h.Worker, Host: hostOf(w.Peer), Version: h.Version, Devices: h.Devices,
			Cores: h.Cores, Slots: h.Slots, Running: ws.Running, Counted: ws.Counted, Failed: ws.Failed,
			Heard: max(0, in.Now.Sub(w.Heard)), Stats: stats[h.Worker]}
		if ws.Faulty != nil {
			wi.Faulty = ws.Faulty.Error()
		}
		switch {
		case ws.Suspect:
			wi.State, wi.Left = api.WorkerLost, "a lease lapsed; no work until it shows life"
		case wi.Heard >= SilentAfter(in.Heartbeat):
			wi.State, wi.Left = api.WorkerLost, "silent for "+wi.Heard.Round(time.Millisecond).String()
		case ws.Draining:
			wi.State = api.WorkerDraining
		case ws.Running > 0:
			wi.State = api.WorkerBusy
		default:
			wi.State = api.WorkerIdle
		}
		out = append(out, wi)
	}
	for i := len(in.Departed) - 1; i >= 0; i-- {
		d := in.Departed[i]
		h := d.Hello
		out = append(out, api.WorkerInfo{Worker: h.Worker, Version: h.Version, Devices: h.Devices, Cores: h.Cores,
			Slots: h.Slots, State: api.WorkerLost, Counted: d.Counted, Failed: d.Failed, Left: d.Reason,
			Heard: max(0, time.Duration(in.NowTick-d.Left)*in.Tick), Stats: stats[h.Worker]})
	}
	return out
}

// perWorker sums each worker's accepted attempts over the jobs.
func perWorker(jobs []JobInput) map[api.WorkerID]api.WorkerStats {
	out := map[api.WorkerID]api.WorkerStats{}
	for _, j := range jobs {
		for _, s := range j.Status.PerWorker {
			t := out[s.Worker]
			t.Worker = s.Worker
			t.Subtasks += s.Subtasks
			t.Fetch += s.Fetch
			t.Decode += s.Decode
			t.Upload += s.Upload
			t.KernelTime += s.KernelTime
			t.Busy += s.Busy
			t.Wall += s.Wall
			t.Edges += s.Edges
			if t.FirstStart.IsZero() || s.FirstStart.Before(t.FirstStart) {
				t.FirstStart = s.FirstStart
			}
			if s.LastEnd.After(t.LastEnd) {
				t.LastEnd = s.LastEnd
			}
			out[s.Worker] = t
		}
	}
	return out
}

// hostOf is the host of a host:port address.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// WorkerOf is a worker's JSON row.
func WorkerOf(w api.WorkerInfo) Worker {
	s := w.Stats
	out := Worker{ID: string(w.Worker), Host: w.Host, Version: w.Version, Devices: []Device{}, Cores: w.Cores,
		Slots: w.Slots, State: string(w.State), Running: w.Running, Done: w.Counted, Failed: w.Failed,
		Faulty: w.Faulty, Left: w.Left, HeartbeatAgeSeconds: w.Heard.Seconds(), Subtasks: s.Subtasks,
		KernelSeconds: s.KernelTime.Seconds(), FetchSeconds: s.Fetch.Seconds(), DecodeSeconds: s.Decode.Seconds(),
		UploadSeconds: s.Upload.Seconds(), BusySeconds: s.Busy.Seconds()}
	for _, d := range w.Devices {
		out.Devices = append(out.Devices, Device{Kind: d.Kind, Name: d.Name, Memory: d.Memory})
	}
	if s.Subtasks > 0 && s.Wall > 0 {
		eps := float64(s.Edges) / s.Wall.Seconds()
		share := s.Busy.Seconds() / (s.Wall.Seconds() * float64(max(1, w.Slots)))
		out.EdgesPerSecond, out.BusyShare = &eps, &share
	}
	return out
}
