package gpu

import "github.com/trigrid/trigrid/kernels"

// pickKernel is the GPU auto choice per subtask, a pure function of the
// subtask's statistics so that it is testable without a GPU. polak is the
// fastest of the always-built kernels on every graph measured so far
// (docs/gpu.md).
func pickKernel(s kernels.SubtaskStats) string {
	_ = s
	return "polak"
}
