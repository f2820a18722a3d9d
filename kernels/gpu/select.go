package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/trigrid/trigrid/kernels"
)

// SelectOptions configure Select.
type SelectOptions struct {
	// Library options (path, device, memory limit) for the GPU.
	Library Options
	// Workers and Progress go to the CPU kernels; 0 workers means
	// GOMAXPROCS.
	Workers  int
	Progress func(done, total int64)
	// Logger receives the reason for a CPU fallback; nil discards it.
	Logger *slog.Logger
}

// Selection says where subtasks are counted and makes the counters.
type Selection struct {
	// Device is "cpu" or the GPU's name.
	Device string
	// GPU describes the device counted on; nil on the CPU.
	GPU *Device
	// Kernel is the kernel the counters run: the one asked for, or the
	// CPU's "auto" when a GPU-only kernel fell back to the CPU.
	Kernel string
	// Fallback says why the GPU was not used although the device and kernel
	// allowed it (no library, a file that is not one, wrong ABI, no
	// device); empty when the count runs where it was asked to.
	Fallback string
	// New makes one Counter per worker: a Counter may own device state and
	// is used by one goroutine at a time.
	New func() (kernels.Counter, error)
}

// Select chooses the device ("auto", "cpu" or "gpu") and kernel. auto
// uses the GPU when the kernel has a GPU version, the library loads and it
// reports a device, and otherwise the CPU kernels, logging why; gpu fails
// with a clear error instead; cpu never touches the library. A GPU-only
// kernel under auto falls back to the CPU's "auto".
func Select(device, kernel string, opts SelectOptions) (*Selection, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	onGPU := slices.Contains(kernelNames, kernel)
	onCPU := slices.Contains(kernels.CPUKernelNames(), kernel)
	if !onGPU && !onCPU {
		return nil, fmt.Errorf("gpu: select: kernel %q: want one of %v (GPU) or %v (CPU)", kernel, kernelNames, kernels.CPUKernelNames())
	}
	switch device {
	case "cpu":
		if !onCPU {
			return nil, fmt.Errorf("gpu: select: kernel %s runs on a GPU only; CPU kernels: %v", kernel, kernels.CPUKernelNames())
		}
		return cpuSelection(kernel, opts), nil
	case "gpu", "auto":
	default:
		return nil, fmt.Errorf("gpu: select: device %q: want auto, cpu or gpu", device)
	}
	if !onGPU {
		if device == "gpu" {
			return nil, fmt.Errorf("gpu: select: kernel %s runs on the CPU only; GPU kernels: %v", kernel, kernelNames)
		}
		return cpuSelection(kernel, opts), nil
	}
	lo := opts.Library
	if lo.Logger == nil {
		lo.Logger = logger
	}
	lib, dev, err := openDevice(lo)
	if err == nil {
		return &Selection{Device: dev.Name, GPU: &dev, Kernel: kernel,
			New: func() (kernels.Counter, error) { return lib.NewCounter(kernel) }}, nil
	}
	if device == "gpu" {
		return nil, err
	}
	asked := kernel
	if !onCPU {
		kernel = "auto"
	}
	sel := cpuSelection(kernel, opts)
	sel.Fallback = err.Error()
	if errors.Is(err, ErrNoLibrary) && lo.Path == "" && os.Getenv(EnvLibrary) == "" {
		// The usual case on a machine without CUDA, where nobody pointed
		// at a library: say it briefly and keep the search list for
		// debug logs.
		sel.Fallback = "no CUDA library found"
		logger.Info("no CUDA library found; counting on the CPU (set --cuda-lib or TRIGRID_CUDA_LIB to use a GPU)", "kernel", kernel, "asked", asked)
		logger.Debug("CUDA library search", "err", err)
	} else {
		logger.Warn("GPU not usable; counting on the CPU", "reason", err.Error(), "kernel", kernel, "asked", asked)
	}
	return sel, nil
}

func cpuSelection(kernel string, opts SelectOptions) *Selection {
	return &Selection{Device: "cpu", Kernel: kernel, New: func() (kernels.Counter, error) {
		return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: opts.Workers, Progress: opts.Progress})
	}}
}

// openDevice loads the library and checks that it has the device asked for.
func openDevice(opts Options) (*Library, Device, error) {
	lib, err := Open(opts)
	if err != nil {
		return nil, Device{}, err
	}
	devs, err := lib.Devices()
	if err != nil {
		return nil, Device{}, err
	}
	if opts.Device < 0 || opts.Device >= len(devs) {
		return nil, Device{}, fmt.Errorf("gpu: %s: device %d of %d: %w", lib.Path(), opts.Device, len(devs), ErrNoDevice)
	}
	return lib, devs[opts.Device], nil
}
