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
	// Devices lists the GPU indexes to count on, one slot each; nil or
	// empty means every visible GPU. Library.Device is ignored.
	Devices []int
}

// Selection says where subtasks are counted and makes the counters.
type Selection struct {
	// Device is "cpu" or the first GPU's name.
	Device string
	// GPU describes the first device counted on; nil on the CPU.
	GPU *Device
	// Kernel is the kernel the counters run: the one asked for, or the
	// CPU's "auto" when a GPU-only kernel fell back to the CPU.
	Kernel string
	// Fallback says why the GPU was not used although the device and kernel
	// allowed it (no library, a file that is not one, wrong ABI, no
	// device); empty when the count runs where it was asked to.
	Fallback string
	// New makes a Counter on the first device (Slots[0].New): a Counter
	// may own device state and is used by one goroutine at a time.
	New func() (kernels.Counter, error)
	// Slots has one entry per device counted on: every selected GPU, or
	// the CPU alone.
	Slots []Slot
}

// Slot is one counting device of a Selection.
type Slot struct {
	// Device is "cpu" or the GPU's name; GPU is nil on the CPU.
	Device string
	GPU    *Device
	// New makes a Counter on this device.
	New func() (kernels.Counter, error)
	// NewKernel makes a Counter for another kernel on this device: a GPU
	// kernel on a GPU, a CPU kernel on the CPU (a GPU slot counts CPU
	// kernels on the host). A GPU kernel on the CPU slot is an error.
	NewKernel func(kernel string) (kernels.Counter, error)
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
	lib, devs, err := openDevices(lo, opts.Devices)
	if err == nil {
		sel := &Selection{Kernel: kernel}
		for _, d := range devs {
			sel.Slots = append(sel.Slots, Slot{Device: d.Name, GPU: &d,
				New: func() (kernels.Counter, error) { return lib.NewCounterOn(d.Index, kernel) },
				NewKernel: func(k string) (kernels.Counter, error) {
					if slices.Contains(kernelNames, k) {
						return lib.NewCounterOn(d.Index, k)
					}
					return newCPUKernel(k, opts)
				}})
		}
		sel.Device, sel.GPU, sel.New = sel.Slots[0].Device, sel.Slots[0].GPU, sel.Slots[0].New
		return sel, nil
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
		logger.Debug("no CUDA library found; counting on the CPU (set --cuda-lib or TRIGRID_CUDA_LIB to use a GPU)", "kernel", kernel, "asked", asked)
		logger.Debug("CUDA library search", "err", err)
	} else {
		logger.Warn("GPU not usable; counting on the CPU", "reason", err.Error(), "kernel", kernel, "asked", asked)
	}
	return sel, nil
}

func cpuSelection(kernel string, opts SelectOptions) *Selection {
	newCPU := func() (kernels.Counter, error) { return newCPUKernel(kernel, opts) }
	return &Selection{Device: "cpu", Kernel: kernel, New: newCPU, Slots: []Slot{{Device: "cpu", New: newCPU,
		NewKernel: func(k string) (kernels.Counter, error) { return newCPUKernel(k, opts) }}}}
}

// newCPUKernel makes a CPU counter, saying so when kernel runs on a GPU
// only.
func newCPUKernel(kernel string, opts SelectOptions) (kernels.Counter, error) {
	if !slices.Contains(kernels.CPUKernelNames(), kernel) && slices.Contains(kernelNames, kernel) {
		return nil, fmt.Errorf("gpu: kernel %s runs on a GPU only, and this slot is the CPU", kernel)
	}
	return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: opts.Workers, Progress: opts.Progress})
}

// openDevices loads the library and returns the devices asked for (every
// visible one when want is empty). An index that is not visible, or one
// given twice, is an error.
func openDevices(opts Options, want []int) (*Library, []Device, error) {
	lib, err := Open(opts)
	if err != nil {
		return nil, nil, err
	}
	devs, err := lib.Devices()
	if err != nil {
		return nil, nil, err
	}
	if len(devs) == 0 {
		return nil, nil, fmt.Errorf("gpu: %s: %w", lib.Path(), ErrNoDevice)
	}
	if len(want) == 0 {
		return lib, devs, nil
	}
	var out []Device
	seen := map[int]bool{}
	for _, d := range want {
		if d < 0 || d >= len(devs) {
			return nil, nil, fmt.Errorf("gpu: %s: device %d of %d: %w", lib.Path(), d, len(devs), ErrNoDevice)
		}
		if seen[d] {
			return nil, nil, fmt.Errorf("gpu: device %d listed twice", d)
		}
		seen[d] = true
		out = append(out, devs[d])
	}
	return lib, out, nil
}
