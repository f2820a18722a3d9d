package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/pipeline"
)

// addKernelSettingFlag registers the repeatable --kernel-setting flag
// (config file: a list under kernel-setting; environment:
// TRIGRID_KERNEL_SETTING=a=1,b=2).
func addKernelSettingFlag(cmd *cobra.Command, list *[]string) {
	cmd.Flags().StringSliceVar(list, "kernel-setting", nil,
		"GPU kernel tuning as name=value (repeatable; names: "+strings.Join(gpu.SettingNames(), ", ")+
			"; see kernels/cuda/trigrid.h); speed only, never the count")
}

// kernelSettings parses --kernel-setting.
func kernelSettings(list []string) (gpu.Settings, error) {
	s, err := gpu.ParseSettings(list)
	if err != nil {
		return nil, fmt.Errorf("--kernel-setting: %w", err)
	}
	return s, nil
}

// reportJSON is a count report with the kernel settings given, for --json.
type reportJSON struct {
	*pipeline.Report
	KernelSettings gpu.Settings `json:"kernel_settings,omitempty"`
}

// memModel is how --partitions 0 accounts a subtask's memory: on a GPU
// pipeline.GPUMemModel, else the CPU kernels' model.
func (f *deviceFlags) memModel() partition.MemModel {
	if f.selected != nil && f.selected.GPU != nil {
		return pipeline.GPUMemModel()
	}
	return partition.HostModel()
}
