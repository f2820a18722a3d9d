package scale

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// A run's shares are the workers' CPU and the rest of the host's busy
// time over the bench's wall time; a missing sample leaves them 0.
func TestRunShares(t *testing.T) {
	before := cpuSample{host: 10 * time.Second, workers: 2 * time.Second, ok: true}
	after := cpuSample{host: 18 * time.Second, workers: 5 * time.Second, ok: true}
	var r Run
	r.shares(before, after, 4*time.Second)
	if r.WorkerCPUSeconds != 3 || r.WorkerCores != 0.75 || r.OtherCores != 1.25 {
		t.Errorf("shares %+v; want 3 s of worker CPU, 0.75 and 1.25 cores", r)
	}
	var none Run
	none.shares(cpuSample{}, after, 4*time.Second)
	if none.WorkerCPUSeconds != 0 || none.WorkerCores != 0 || none.OtherCores != 0 {
		t.Errorf("shares without a first sample: %+v", none)
	}
}

// On Linux the bench reads its own CPU time and the host's busy time,
// and both grow while it computes.
func TestProcCPUAndHostBusy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the CPU times come from Linux's /proc")
	}
	p0, ok1 := procCPU(os.Getpid())
	h0, ok2 := hostBusy()
	if !ok1 || !ok2 {
		t.Fatalf("procCPU %v, hostBusy %v: want both read", ok1, ok2)
	}
	// Compute until both have moved (their unit is a clock tick, 10 ms,
	// and the host's ticks are booked apart from the process's), for at
	// most 10 s of a loaded machine.
	x, p1, h1 := 1, p0, h0
	for start := time.Now(); (p1 <= p0 || h1 <= h0) && time.Since(start) < 10*time.Second; {
		for range 1 << 20 {
			x = x*31 + 7
		}
		p1, _ = procCPU(os.Getpid())
		h1, _ = hostBusy()
	}
	if p1 <= p0 || h1 <= h0 || x == 0 {
		t.Errorf("after computing: own CPU %v -> %v, host busy %v -> %v", p0, p1, h0, h1)
	}
	if _, ok := procCPU(-1); ok {
		t.Error("procCPU of no process read something")
	}
}
