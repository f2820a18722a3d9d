package gpu

import "github.com/trigrid/trigrid/kernels"

// pickKernel is the GPU auto choice per subtask: chooseKernel applied to the
// subtask's statistics, so that it stays a pure, GPU-free function.
func pickKernel(s kernels.SubtaskStats) string {
	return chooseKernel(gpuStats(s))
}

// gpuStats maps the host's O(1) subtask figures onto what chooseKernel
// reads. kernels.SubtaskStats carries no longest-row figures (they are known
// only once a block is loaded), so MaxDegree and JKMaxDegree stay zero;
// chooseKernel decides on the edge counts alone and must not depend on them.
func gpuStats(s kernels.SubtaskStats) SubtaskStats {
	return SubtaskStats{
		Rows:    s.Rows,
		Edges:   s.Edges,
		IKEdges: s.IKEdges,
		JKEdges: s.JKEdges,
	}
}
