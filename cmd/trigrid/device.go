package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/coordinator"
	"github.com/trigrid/trigrid/kernels"
)

// deviceFlags choose where and with which kernel subtasks are counted.
type deviceFlags struct {
	device  string
	kernel  string
	cudaLib string
	memLim  string

	selected selection // set by apply
}

func (f *deviceFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.device, "device", "auto", "where to count: auto (a GPU if one can be used, else the CPU), cpu, gpu")
	cmd.Flags().StringVar(&f.kernel, "kernel", "auto", "kernel: auto; CPU: "+strings.Join(kernels.CPUKernelNames(), ", ")+"; GPU: polak, trix, grouptc, trust, wetric")
	cmd.Flags().StringVar(&f.cudaLib, "cuda-lib", "", "path of libtrigrid_cuda.so (default: $TRIGRID_CUDA_LIB, next to the binary, system paths)")
	cmd.Flags().StringVar(&f.memLim, "device-mem-limit", "", "memory budget for one subtask, e.g. 8GiB (default: the GPU's memory, or the host's for the CPU)")
}

// apply sets the counter factory and device of cfg.
func (f *deviceFlags) apply(cmd *cobra.Command, cfg *coordinator.CountConfig, prog *progress) error {
	switch f.device {
	case "auto", "cpu", "gpu":
	default:
		return fmt.Errorf("--device %q: want auto, cpu or gpu", f.device)
	}
	sel, err := selectCounter(cmd, f, cfg.Workers, prog)
	if err != nil {
		return err
	}
	f.selected = sel
	cfg.NewCounter = sel.newCounter
	cfg.Device = sel.device
	return nil
}

// selection is the outcome of choosing a device and kernel.
type selection struct {
	device     string
	newCounter func() (kernels.Counter, error)
	gpuMem     int64 // the GPU's memory, 0 on the CPU
}

func cpuSelection(kernel string, workers int, prog *progress) (selection, error) {
	// Fail on a bad name now rather than after reading a large file.
	if _, err := kernels.NewCPU(kernel, kernels.CPUOptions{Workers: workers}); err != nil {
		return selection{}, fmt.Errorf("--kernel: %w", err)
	}
	return selection{
		device: "cpu",
		newCounter: func() (kernels.Counter, error) {
			return kernels.NewCPU(kernel, kernels.CPUOptions{Workers: workers, Progress: prog.Func()})
		},
	}, nil
}
