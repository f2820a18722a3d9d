package main

import (
	"fmt"
	"log/slog"

	"github.com/trigrid/trigrid/kernels/gpu"
)

// selectCounter picks the device and kernel from the flags.
func selectCounter(f *deviceFlags, workers int, prog *progress) (*gpu.Selection, error) {
	lim, err := f.deviceLimit()
	if err != nil {
		return nil, err
	}
	set, err := kernelSettings(f.settings)
	if err != nil {
		return nil, err
	}
	pinned, err := f.pinnedHost()
	if err != nil {
		return nil, err
	}
	if len(set) > 0 && f.device == "cpu" {
		return nil, fmt.Errorf("--kernel-setting %s: settings tune the GPU kernels; --device cpu uses none", set)
	}
	sel, err := gpu.Select(f.device, f.kernel, gpu.SelectOptions{
		Library:  gpu.Options{Path: f.cudaLib, MemLimit: lim, Settings: set, PinnedHost: pinned},
		Workers:  workers,
		Progress: prog.Func(),
		Logger:   slog.Default(),
		Devices:  f.devices,
	})
	if err != nil {
		return nil, fmt.Errorf("--device %s --kernel %s: %w", f.device, f.kernel, err)
	}
	return sel, nil
}

// deviceLimit is --device-mem-limit in bytes, 0 when unset.
func (f *deviceFlags) deviceLimit() (uint64, error) {
	if f.memLim == "" {
		return 0, nil
	}
	n, err := parseBytes(f.memLim)
	if err != nil {
		return 0, fmt.Errorf("--device-mem-limit: %w", err)
	}
	return uint64(n), nil
}

// pinnedHost is --pinned-host-mem as gpu.Options.PinnedHost.
func (f *deviceFlags) pinnedHost() (int64, error) { return pinnedHostOption(f.pinned) }

// pinnedHostOption reads a --pinned-host-mem value as gpu.Options.PinnedHost:
// "" is the library's default, 0 is none (negative there).
func pinnedHostOption(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := parseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("--pinned-host-mem: %w", err)
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// budget is the memory one subtask may use when P is chosen automatically:
// --device-mem-limit, else the GPU's memory, else the host's.
func (f *deviceFlags) budget() (int64, error) {
	lim, err := f.deviceLimit()
	if err != nil {
		return 0, err
	}
	switch {
	case lim > 0:
		return int64(lim), nil
	case f.selected != nil && f.selected.GPU != nil:
		return int64(f.selected.GPU.TotalMem), nil
	}
	if m := hostMemory(); m > 0 {
		return m, nil
	}
	return 0, fmt.Errorf("--partitions 0: cannot read this machine's memory; set --device-mem-limit")
}
