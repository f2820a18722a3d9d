package gpu

import (
	"testing"

	"github.com/trigrid/trigrid/kernels"
)

func TestChooseKernel(t *testing.T) {
	tests := []struct {
		name string
		s    SubtaskStats
		want string
	}{
		{"empty subtask", SubtaskStats{}, "polak"},
		{"empty IK", SubtaskStats{Rows: 10, Edges: 5 << 20, MaxDegree: 0, IKEdges: 0, JKEdges: 5 << 20}, "polak"},
		{"empty JK", SubtaskStats{Rows: 10, Edges: 5 << 20, MaxDegree: 9, IKEdges: 5 << 20, JKEdges: 0}, "polak"},
		{"soc-Epinions1 whole graph", SubtaskStats{Rows: 75877, Edges: 405739, MaxDegree: 121,
			IKEdges: 405739, JKEdges: 405739, JKMaxDegree: 121}, "wetric"},
		{"ca-CondMat whole graph, small and sparse", SubtaskStats{Rows: 23133, Edges: 93439,
			IKEdges: 93439, JKEdges: 93439}, "polak"},
		{"ego-Facebook whole graph, small and dense", SubtaskStats{Rows: 4039, Edges: 88234,
			IKEdges: 88234, JKEdges: 88234}, "wetric"},
		{"small, rows just under the dense degree", SubtaskStats{Rows: 1000, Edges: denseRowDegree*1000 - 1,
			IKEdges: 7999, JKEdges: 7999}, "polak"},
		{"small, rows at the dense degree", SubtaskStats{Rows: 1000, Edges: denseRowDegree * 1000,
			IKEdges: 8000, JKEdges: 8000}, "wetric"},
		{"just under the threshold", SubtaskStats{Rows: 1 << 16, Edges: smallSubtaskEdges - 1, MaxDegree: 300,
			IKEdges: smallSubtaskEdges - 1, JKEdges: smallSubtaskEdges - 1, JKMaxDegree: 300}, "polak"},
		{"at the threshold", SubtaskStats{Rows: 1 << 16, Edges: smallSubtaskEdges, MaxDegree: 300,
			IKEdges: smallSubtaskEdges, JKEdges: smallSubtaskEdges, JKMaxDegree: 300}, "wetric"},
		{"rmat18 whole graph", SubtaskStats{Rows: 174283, Edges: 3804212, MaxDegree: 424,
			IKEdges: 3804212, JKEdges: 3804212, JKMaxDegree: 424}, "wetric"},
		{"rmat18 P=2 block", SubtaskStats{Rows: 87142, Edges: 951053, MaxDegree: 220,
			IKEdges: 951053, JKEdges: 951053, JKMaxDegree: 220}, "wetric"},
		{"rmat22 P=4 block", SubtaskStats{Rows: 598898, Edges: 4009592, MaxDegree: 300,
			IKEdges: 4009592, JKEdges: 4009592, JKMaxDegree: 300}, "wetric"},
		{"rmat23 whole graph", SubtaskStats{Rows: 4611319, Edges: 129336079, MaxDegree: 1334,
			IKEdges: 129336079, JKEdges: 129336079, JKMaxDegree: 1334}, "wetric"},
		{"hub row", SubtaskStats{Rows: 1000, Edges: 2 << 20, MaxDegree: 1 << 20,
			IKEdges: 2 << 20, JKEdges: 2 << 20, JKMaxDegree: 1 << 20}, "wetric"},
	}
	valid := map[string]bool{"wetric": true, "trust": true, "trix": true, "grouptc": true, "polak": true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := chooseKernel(tc.s)
			if !valid[got] {
				t.Fatalf("chooseKernel(%+v) = %q, not a kernel name", tc.s, got)
			}
			if got != tc.want {
				t.Errorf("chooseKernel(%+v) = %q, want %q", tc.s, got, tc.want)
			}
		})
	}
}

// pickKernel is chooseKernel on the mapped statistics: the same answers for
// the host's figures of the same subtasks, including the resident graph's
// (Preprocess fills Edges, Rows, IKEdges, JKEdges and KCols only).
func TestPickKernel(t *testing.T) {
	tests := []struct {
		name string
		s    kernels.SubtaskStats
		want string
	}{
		{"zero", kernels.SubtaskStats{}, "polak"},
		{"empty JK", kernels.SubtaskStats{Edges: 4 << 20, Rows: 1000, IKEdges: 4 << 20}, "polak"},
		{"empty IK", kernels.SubtaskStats{Edges: 4 << 20, Rows: 1000, JKEdges: 4 << 20}, "polak"},
		{"soc-Epinions1", kernels.SubtaskStats{Edges: 405739, Rows: 75877, IKEdges: 405739, JKEdges: 405739,
			KCols: 75877, MeanIK: 5.3, MeanJK: 5.3, SameIJIK: true}, "wetric"},
		{"ca-GrQc", kernels.SubtaskStats{Edges: 14484, Rows: 5242, IKEdges: 14484, JKEdges: 14484,
			KCols: 5242, SameIJIK: true}, "polak"},
		{"just under the threshold", kernels.SubtaskStats{Edges: smallSubtaskEdges - 1, Rows: 1 << 16,
			IKEdges: smallSubtaskEdges - 1, JKEdges: smallSubtaskEdges - 1}, "polak"},
		{"at the threshold", kernels.SubtaskStats{Edges: smallSubtaskEdges, Rows: 1 << 16,
			IKEdges: smallSubtaskEdges, JKEdges: smallSubtaskEdges}, "wetric"},
		{"rmat18 P=2 block", kernels.SubtaskStats{Edges: 951053, Rows: 87142, IKEdges: 951053,
			JKEdges: 951053, KCols: 87142}, "wetric"},
		{"rmat23 resident", kernels.SubtaskStats{Edges: 129336079, Rows: 4611319, IKEdges: 129336079,
			JKEdges: 129336079, KCols: 4611319, Wedges: 7.3e9}, "wetric"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pickKernel(tc.s); got != tc.want {
				t.Errorf("pickKernel(%+v) = %q, want %q", tc.s, got, tc.want)
			}
			if got, want := pickKernel(tc.s), chooseKernel(gpuStats(tc.s)); got != want {
				t.Errorf("pickKernel = %q, chooseKernel(gpuStats) = %q", got, want)
			}
			g := gpuStats(tc.s)
			if g.Edges != tc.s.Edges || g.Rows != tc.s.Rows || g.IKEdges != tc.s.IKEdges || g.JKEdges != tc.s.JKEdges {
				t.Errorf("gpuStats(%+v) = %+v: sizes not carried over", tc.s, g)
			}
		})
	}
}
