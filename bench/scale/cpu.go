package scale

import "time"

// cpuSample is what the bench reads of the host's CPU at one moment: the
// time all its cores have been busy and the CPU time of the cluster's
// workers. ok is false where the system does not say (child_linux.go).
type cpuSample struct {
	host, workers time.Duration
	ok            bool
}

// cpu samples the host and the cluster's workers.
func (cl *cluster) cpu() cpuSample {
	host, ok := hostBusy()
	if !ok {
		return cpuSample{}
	}
	s := cpuSample{host: host, ok: true}
	for _, w := range cl.workers {
		d, ok := procCPU(w.cmd.Process.Pid)
		if !ok {
			return cpuSample{}
		}
		s.workers += d
	}
	return s
}

// shares sets run's WorkerCPUSeconds, WorkerCores and OtherCores from
// samples taken before and after its job, wall apart; nothing where
// either sample is missing.
func (run *Run) shares(before, after cpuSample, wall time.Duration) {
	if !before.ok || !after.ok || wall <= 0 {
		return
	}
	workers := (after.workers - before.workers).Seconds()
	others := max(0, (after.host-before.host)-(after.workers-before.workers)).Seconds()
	run.WorkerCPUSeconds = workers
	run.WorkerCores = workers / wall.Seconds()
	run.OtherCores = others / wall.Seconds()
}
