package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/pipeline"
)

// deviceFlags choose where and with which kernel subtasks are counted.
type deviceFlags struct {
	device  string
	kernel  string
	cudaLib string
	memLim  string
	// pinned is --pinned-host-mem: host memory kept page-locked for blocks.
	pinned string
	// settings are --kernel-setting's name=value pairs.
	settings []string
	devices  []int

	selected *gpu.Selection // set by apply
}

func (f *deviceFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.device, "device", "auto", "where to count: auto (a GPU if one can be used, else the CPU), cpu, gpu")
	cmd.Flags().StringVar(&f.kernel, "kernel", "auto", "kernel: auto; CPU: "+strings.Join(kernels.CPUKernelNames(), ", ")+"; GPU: "+strings.Join(gpu.Kernels(), ", "))
	cmd.Flags().StringVar(&f.cudaLib, "cuda-lib", "", "path of libtrigrid_cuda.so (default: $TRIGRID_CUDA_LIB, next to the binary, system paths)")
	cmd.Flags().IntSliceVar(&f.devices, "devices", nil, "GPU indexes to count on, one subtask at a time each, e.g. 0,1 (default: every GPU)")
	cmd.Flags().StringVar(&f.memLim, "device-mem-limit", "", "memory budget for one subtask, e.g. 8GiB (default: the GPU's memory, or the host's for the CPU)")
	cmd.Flags().StringVar(&f.pinned, "pinned-host-mem", "2GiB", "host memory kept page-locked for the blocks uploaded to the GPUs (pinned in place, shared by every GPU), so that uploads run at the bus's rate beside kernels, e.g. 8GiB (0: none, blocks are copied from pageable memory)")
	addKernelSettingFlag(cmd, &f.settings)
}

// apply sets the counting slots and device of cfg.
func (f *deviceFlags) apply(cfg *pipeline.Config, prog *progress) error {
	sel, err := selectCounter(f, cfg.Workers, prog)
	if err != nil {
		return err
	}
	f.selected = sel
	cfg.Slots = pipeline.SlotsOf(sel)
	cfg.Device = sel.Device
	if len(sel.Slots) > 1 {
		cfg.Device = fmt.Sprintf("%d GPUs (%s, ...)", len(sel.Slots), sel.Device)
	}
	return nil
}

// annotate records in rep the kernel asked for and why the GPU was not
// used, so that a fallback is visible in the report and the JSON.
func (f *deviceFlags) annotate(rep *pipeline.Report) {
	rep.KernelRequested = f.kernel
	if f.selected != nil {
		rep.Fallback = f.selected.Fallback
	}
}
