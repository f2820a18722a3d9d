package main

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
)

// selectCounter picks the device and kernel. --device auto uses a GPU when
// the CUDA library loads and reports a device, and otherwise counts on the
// CPU, logging why; --device gpu fails instead.
func selectCounter(cmd *cobra.Command, f *deviceFlags, workers int, prog *progress) (selection, error) {
	gpuKernel := slices.Contains(gpu.Kernels(), f.kernel)
	cpuKernel := slices.Contains(kernels.CPUKernelNames(), f.kernel)
	if !gpuKernel && !cpuKernel {
		return selection{}, fmt.Errorf("--kernel %q: want one of %v (GPU) or %v (CPU)", f.kernel, gpu.Kernels(), kernels.CPUKernelNames())
	}
	if f.device == "cpu" || (f.device == "auto" && !gpuKernel) {
		if !cpuKernel {
			return selection{}, fmt.Errorf("--kernel %s runs on a GPU only; CPU kernels: %v", f.kernel, kernels.CPUKernelNames())
		}
		return cpuSelection(f.kernel, workers, prog)
	}
	if f.device == "gpu" && !gpuKernel {
		return selection{}, fmt.Errorf("--kernel %s runs on the CPU only; GPU kernels: %v", f.kernel, gpu.Kernels())
	}
	lim, err := f.deviceLimit()
	if err != nil {
		return selection{}, err
	}
	lib, dev, err := openGPU(f.cudaLib, lim)
	if err != nil {
		if f.device == "gpu" {
			return selection{}, fmt.Errorf("--device gpu: %w", err)
		}
		k := f.kernel
		if !cpuKernel {
			k = "auto"
		}
		if errors.Is(err, gpu.ErrNoLibrary) {
			// The usual case on a machine without CUDA: say it briefly and
			// keep the search list for --log-level debug.
			slog.Info("no CUDA library found; counting on the CPU (set --cuda-lib or TRIGRID_CUDA_LIB to use a GPU)", "kernel", k)
			slog.Debug("CUDA library search", "err", err)
		} else {
			slog.Warn("GPU not usable; counting on the CPU", "reason", err.Error(), "kernel", k)
		}
		return cpuSelection(k, workers, prog)
	}
	kernel := f.kernel
	return selection{
		device:     dev.Name,
		newCounter: func() (kernels.Counter, error) { return lib.NewCounter(kernel) },
		gpuMem:     int64(dev.TotalMem),
	}, nil
}

func openGPU(path string, limit uint64) (*gpu.Library, gpu.Device, error) {
	lib, err := gpu.Open(gpu.Options{Path: path, MemLimit: limit, Logger: slog.Default()})
	if err != nil {
		return nil, gpu.Device{}, err
	}
	devs, err := lib.Devices()
	if err != nil {
		return nil, gpu.Device{}, err
	}
	if len(devs) == 0 {
		return nil, gpu.Device{}, fmt.Errorf("%s: no GPU device", lib.Path())
	}
	return lib, devs[0], nil
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
	case f.selected.gpuMem > 0:
		return f.selected.gpuMem, nil
	}
	if m := hostMemory(); m > 0 {
		return m, nil
	}
	return 0, fmt.Errorf("--partitions 0: cannot read this machine's memory; set --device-mem-limit")
}
