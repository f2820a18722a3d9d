package pb

import (
	"fmt"
	"strings"

	"github.com/trigrid/trigrid/api"
)

// MaxWorkers bounds the workers of a ListWorkersResponse.
const MaxWorkers = 1 << 16

var workerStates = map[api.WorkerState]bool{api.WorkerBusy: true, api.WorkerIdle: true, api.WorkerDraining: true, api.WorkerLost: true}

// EncodeWorkers converts the workers of a ListWorkers answer, at most
// MaxWorkers of them; texts are cut to their limits.
func EncodeWorkers(ws []api.WorkerInfo) *ListWorkersResponse {
	out := &ListWorkersResponse{}
	for _, w := range ws[:min(len(ws), MaxWorkers)] {
		m := &WorkerInfo{Worker: string(w.Worker), Host: cleanText(w.Host, api.MaxNameLen),
			Version: cleanText(w.Version, api.MaxNameLen), Cores: int32(w.Cores), Slots: int32(w.Slots),
			State: string(w.State), Running: int64(w.Running), Counted: int64(w.Counted), Failed: int64(w.Failed),
			Faulty: cleanText(w.Faulty, api.MaxErrorLen), Left: cleanText(w.Left, api.MaxErrorLen),
			HeardNs: int64(w.Heard)}
		for _, d := range w.Devices[:min(len(w.Devices), api.MaxDevices)] {
			m.Devices = append(m.Devices, &Device{Kind: cleanText(d.Kind, api.MaxNameLen), Name: cleanText(d.Name, api.MaxNameLen), Memory: d.Memory})
		}
		st := w.Stats
		st.Worker = w.Worker
		m.Stats = encodeWorkerStats([]api.WorkerStats{st})[0]
		out.Workers = append(out.Workers, m)
	}
	return out
}

// cleanText makes s a text api.CheckText accepts: valid UTF-8, control
// characters as spaces, cut to max bytes.
func cleanText(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return api.TruncateText(s, max)
}

// DecodeWorkers validates and converts a ListWorkers answer: named
// workers in a known state, texts within their limits, no count or time
// negative, stats of the worker they come with.
func DecodeWorkers(m *ListWorkersResponse) ([]api.WorkerInfo, error) {
	const msg = "ListWorkersResponse"
	if m == nil {
		return nil, fieldErr(msg, "", ErrNil)
	}
	if err := checkRange(msg, "workers", int64(len(m.GetWorkers())), 0, MaxWorkers); err != nil {
		return nil, err
	}
	var out []api.WorkerInfo
	for i, w := range m.GetWorkers() {
		wi, err := decodeWorker(msg, fmt.Sprintf("workers[%d]", i), w)
		if err != nil {
			return nil, err
		}
		out = append(out, wi)
	}
	return out, nil
}

func decodeWorker(msg, field string, m *WorkerInfo) (api.WorkerInfo, error) {
	if m == nil {
		return api.WorkerInfo{}, fieldErr(msg, field, ErrNil)
	}
	if err := api.CheckID("worker id", m.GetWorker()); err != nil {
		return api.WorkerInfo{}, fieldErr(msg, field+".worker", err)
	}
	if !workerStates[api.WorkerState(m.GetState())] {
		return api.WorkerInfo{}, fieldErr(msg, field+".state", fmt.Errorf("%q is not busy, idle, draining or lost", api.TruncateText(m.GetState(), 32)))
	}
	for _, t := range []struct {
		name, v string
		max     int
	}{{"host", m.GetHost(), api.MaxNameLen}, {"version", m.GetVersion(), api.MaxNameLen},
		{"faulty", m.GetFaulty(), api.MaxErrorLen}, {"left", m.GetLeft(), api.MaxErrorLen}} {
		if err := api.CheckText(t.name, t.v, t.max); err != nil {
			return api.WorkerInfo{}, fieldErr(msg, field+"."+t.name, err)
		}
	}
	for _, c := range []struct {
		name   string
		v, max int64
	}{{"cores", int64(m.GetCores()), 1 << 20}, {"slots", int64(m.GetSlots()), api.MaxBatch},
		{"running", m.GetRunning(), api.MaxBatch}, {"counted", m.GetCounted(), api.MaxSubtasks}, {"failed", m.GetFailed(), api.MaxSubtasks}} {
		if err := checkRange(msg, field+"."+c.name, c.v, 0, c.max); err != nil {
			return api.WorkerInfo{}, err
		}
	}
	heard, err := checkDuration(msg, field+".heard_ns", m.GetHeardNs())
	if err != nil {
		return api.WorkerInfo{}, err
	}
	w := api.WorkerInfo{Worker: api.WorkerID(m.GetWorker()), Host: m.GetHost(), Version: m.GetVersion(),
		Cores: int(m.GetCores()), Slots: int(m.GetSlots()), State: api.WorkerState(m.GetState()),
		Running: int(m.GetRunning()), Counted: int(m.GetCounted()), Failed: int(m.GetFailed()),
		Faulty: m.GetFaulty(), Left: m.GetLeft(), Heard: heard}
	if err := checkRange(msg, field+".devices", int64(len(m.GetDevices())), 0, api.MaxDevices); err != nil {
		return api.WorkerInfo{}, err
	}
	for i, d := range m.GetDevices() {
		f := fmt.Sprintf("%s.devices[%d]", field, i)
		if d == nil {
			return api.WorkerInfo{}, fieldErr(msg, f, ErrNil)
		}
		if err := api.CheckText("device kind", d.GetKind(), api.MaxNameLen); err != nil {
			return api.WorkerInfo{}, fieldErr(msg, f+".kind", err)
		}
		if err := api.CheckText("device name", d.GetName(), api.MaxNameLen); err != nil {
			return api.WorkerInfo{}, fieldErr(msg, f+".name", err)
		}
		if d.GetMemory() < 0 {
			return api.WorkerInfo{}, fieldErr(msg, f+".memory", fmt.Errorf("%d is negative", d.GetMemory()))
		}
		w.Devices = append(w.Devices, api.Device{Kind: d.GetKind(), Name: d.GetName(), Memory: d.GetMemory()})
	}
	if s := m.GetStats(); s != nil {
		if w.Stats, err = decodeOneWorkerStats(msg, field+".stats", s); err != nil {
			return api.WorkerInfo{}, err
		}
		if w.Stats.Worker != w.Worker {
			return api.WorkerInfo{}, fieldErr(msg, field+".stats.worker", fmt.Errorf("%q, not the worker %q", w.Stats.Worker, w.Worker))
		}
	}
	w.Stats.Worker = w.Worker // no stats: none yet, of this worker (as encoded)
	return w, nil
}
