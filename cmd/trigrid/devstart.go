package main

import (
	"slices"
	"sync"

	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/pipeline"
	"github.com/trigrid/trigrid/worker"
)

// deferApply leaves the choice of device to the count itself: cfg.Devices
// runs apply once, the first time a count asks, in the goroutine that
// starts the device while the file is read, so that finding and
// initialising a GPU overlaps the read. Errors are apply's, unchanged.
func (f *deviceFlags) deferApply(cfg *pipeline.Config, prog *progress) {
	var (
		once sync.Once
		sel  pipeline.Config
		err  error
	)
	cfg.Devices = func() ([]worker.Slot, string, error) {
		once.Do(func() { err = f.apply(&sel, prog) })
		return sel.Slots, sel.Device, err
	}
}

// mayUseGPU says whether apply could choose a GPU: the device and kernel
// allow one and the library loads (a quick check that starts no device).
// Where it cannot, apply runs at once and the count reads the input for
// the host.
func (f *deviceFlags) mayUseGPU() bool {
	if f.device == "cpu" || !slices.Contains(gpu.Kernels(), f.kernel) {
		return false
	}
	_, err := gpu.Open(gpu.Options{Path: f.cudaLib})
	return err == nil
}
