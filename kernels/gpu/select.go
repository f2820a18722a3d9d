package gpu

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/trigrid/trigrid/kernels"
)

// SelectOptions configure Select.
type SelectOptions struct {
	// Library options (path, device, memory limit) for the GPU.
	Library Options
	// Workers for the CPU kernels; 0 means GOMAXPROCS.
	Workers int
	// Logger receives the reason for a CPU fallback; nil discards it.
	Logger *slog.Logger
}

// Select returns the Counter for device "auto", "cpu" or "gpu" and a kernel
// name. auto uses the GPU when the library loads and a device works, else
// the CPU kernels, logging why; gpu fails with a clear error when no GPU
// can be used; cpu never touches the library. A GPU-only kernel name asked
// of the CPU falls back to the CPU's "auto" under device auto and is an
// error under device cpu.
func Select(device, kernel string, opts SelectOptions) (kernels.Counter, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cpuOnly := slices.Contains(kernels.CPUKernelNames(), kernel) && !slices.Contains(kernelNames, kernel)
	switch device {
	case "cpu":
		return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: opts.Workers})
	case "gpu":
		if cpuOnly {
			return nil, fmt.Errorf("gpu: select: kernel %q runs on the CPU only (GPU kernels: %v)", kernel, kernelNames)
		}
		return openCounter(kernel, opts)
	case "auto":
		if !cpuOnly {
			c, err := openCounter(kernel, opts)
			if err == nil {
				return c, nil
			}
			cpuKernel := kernel
			if !slices.Contains(kernels.CPUKernelNames(), kernel) {
				cpuKernel = "auto"
			}
			logger.Info("counting on the CPU", "component", "gpu", "reason", err.Error(), "kernel", cpuKernel)
			kernel = cpuKernel
		}
		return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: opts.Workers})
	}
	return nil, fmt.Errorf("gpu: select: device %q: want auto, cpu or gpu", device)
}

func openCounter(kernel string, opts SelectOptions) (*Counter, error) {
	if _, err := kernelID(kernel); err != nil {
		return nil, fmt.Errorf("gpu: select: %w", err)
	}
	lo := opts.Library
	if lo.Logger == nil {
		lo.Logger = opts.Logger
	}
	lib, err := Open(lo)
	if err != nil {
		return nil, err
	}
	return lib.NewCounter(kernel)
}
