package pipeline

import (
	"github.com/trigrid/trigrid/worker"
)

// EngineReport is where a partitioned run's count phase went, from its
// local workers' figures (worker.Stats): the blocks fetched and decoded
// on the host's cores and readied for the devices, the time the slots
// waited for blocks in host memory, the uploads and the kernels. The
// phases overlap (loads run beside counts), so their sum may exceed the
// count phase.
type EngineReport struct {
	// Loaders is the goroutines per worker that load blocks ahead; Loads
	// the blocks fetched and decoded.
	Loaders int `json:"loaders"`
	Loads   int `json:"loads"`
	// Seconds sums each phase over the workers and their slots.
	Seconds EngineSeconds `json:"seconds"`
	// BusyShare is the devices' busy time (uploads and kernels) over the
	// count phase times the number of slots; KernelShare the kernels'
	// alone.
	BusyShare   float64 `json:"busy_share"`
	KernelShare float64 `json:"kernel_share"`
	// Devices has one entry per slot (a GPU, or the CPU).
	Devices []EngineDevice `json:"devices"`
}

// EngineSeconds are the phases of EngineReport, in seconds: fetch,
// decode and stage are the loads' (summed over the cores that made them),
// wait, upload, kernel and busy the slots' (busy = upload + kernel).
type EngineSeconds struct {
	Fetch  float64 `json:"fetch"`
	Decode float64 `json:"decode"`
	Stage  float64 `json:"stage"`
	Wait   float64 `json:"wait"`
	Upload float64 `json:"upload"`
	Kernel float64 `json:"kernel"`
	Busy   float64 `json:"busy"`
}

// EngineDevice is one slot's share of an EngineReport.
type EngineDevice struct {
	Worker   string  `json:"worker"`
	Slot     int     `json:"slot"`
	Device   string  `json:"device"`
	Kind     string  `json:"kind"`
	Subtasks int     `json:"subtasks"`
	Wait     float64 `json:"wait_s"`
	Upload   float64 `json:"upload_s"`
	Kernel   float64 `json:"kernel_s"`
	Busy     float64 `json:"busy_s"`
	// BusyShare is Busy over the count phase.
	BusyShare float64 `json:"busy_share"`
}

// engineReport sums the workers' figures (named by their ids) and the
// loads made into their shared cache before them (pre, nil when none)
// over a count phase of countSeconds.
func engineReport(ids []string, stats []worker.Stats, pre *worker.Blocks, countSeconds float64) *EngineReport {
	if len(stats) == 0 {
		return nil
	}
	r := &EngineReport{}
	if pre != nil {
		s := pre.Stats()
		r.Loads, r.Seconds.Fetch, r.Seconds.Decode = s.Loads, s.Fetch.Seconds(), s.Decode.Seconds()
	}
	share := func(s float64) float64 {
		if countSeconds <= 0 {
			return 0
		}
		return s / countSeconds
	}
	for w, s := range stats {
		r.Loaders = max(r.Loaders, s.Loaders)
		r.Loads += s.Loads
		r.Seconds.Fetch += s.Fetch.Seconds()
		r.Seconds.Decode += s.Decode.Seconds()
		r.Seconds.Stage += s.Stage.Seconds()
		for x, d := range s.Slots {
			e := EngineDevice{Worker: ids[w], Slot: x, Device: d.Device.Name, Kind: d.Device.Kind, Subtasks: d.Subtasks,
				Wait: d.Wait.Seconds(), Upload: d.Upload.Seconds(), Kernel: d.Kernel.Seconds(), Busy: d.Busy.Seconds()}
			e.BusyShare = share(e.Busy)
			r.Devices = append(r.Devices, e)
			r.Seconds.Wait += e.Wait
			r.Seconds.Upload += e.Upload
			r.Seconds.Kernel += e.Kernel
			r.Seconds.Busy += e.Busy
		}
	}
	if n := float64(len(r.Devices)); n > 0 {
		r.BusyShare = share(r.Seconds.Busy / n)
		r.KernelShare = share(r.Seconds.Kernel / n)
	}
	return r
}
