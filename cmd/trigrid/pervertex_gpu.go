package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/trigrid/trigrid/kernels/gpu"
)

// checkLocalKernel refuses per-vertex counts with a GPU kernel that has no
// per-vertex mode, naming those that have one (CPU kernels without one
// hand the count to the CPU's auto kernel, which has).
func checkLocalKernel(perVertex bool, kernel string) error {
	if !perVertex || gpu.HasLocal(kernel) || !slices.Contains(gpu.Kernels(), kernel) {
		return nil
	}
	return fmt.Errorf("--kernel %s has no per-vertex mode (--per-vertex, --per-edge, --top, --clustering); GPU kernels with one: %s", kernel, strings.Join(gpu.LocalKernels(), ", "))
}
