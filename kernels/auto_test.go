package kernels

import "testing"

func TestChooseCPUKernel(t *testing.T) {
	tests := []struct {
		name string
		s    SubtaskStats
		want string
	}{
		{"whole graph", SubtaskStats{Edges: 1e7, KCols: 1e6, MeanIK: 15, MeanJK: 15, SameIJIK: true, Wedges: 3e8}, "hashcol"},
		{"long rows", SubtaskStats{Edges: 1e6, KCols: 1e5, MeanIK: 8, MeanJK: 8, Wedges: 1.6e7}, "hashcol"},
		{"short rows", SubtaskStats{Edges: 6e4, KCols: 3e4, MeanIK: 1.8, MeanJK: 1.8, Wedges: 2e5}, "hash"},
		{"short rows, tail path", SubtaskStats{Edges: 6e4, KCols: 3e4, MeanIK: 1.8, MeanJK: 1.8, SameIJIK: true, Wedges: 2e5}, "hashcol"},
		{"short rows, clipped", SubtaskStats{Edges: 1e6, KCols: 2.6e5, MeanIK: 3.7, MeanJK: 3.7, Clip: true, Wedges: 7e6}, "hashcol"},
		{"P=4 rows", SubtaskStats{Edges: 2.4e5, KCols: 6.5e4, MeanIK: 3.7, MeanJK: 3.7, Wedges: 1.8e6}, "hash"},
		{"tiny work, huge K space", SubtaskStats{Edges: 10, KCols: 1e6, MeanIK: 1, MeanJK: 1, Wedges: 20}, "merge"},
		{"bitset too big", SubtaskStats{Edges: 1e9, KCols: 1 << 31, MeanIK: 9, MeanJK: 9, SameIJIK: true, Wedges: 1e10}, "merge"},
		{"empty", SubtaskStats{}, "hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chooseCPUKernel(tt.s); got != tt.want {
				t.Errorf("chooseCPUKernel(%+v) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

func TestStats(t *testing.T) {
	g := forward(5, clique(5)) // 10 forward edges over 5 rows
	s := Stats(Whole(g))
	if s.Edges != 10 || s.Rows != 5 || s.KCols != 5 || !s.SameIJIK || s.MeanIK != 2 || s.MeanJK != 2 || s.Wedges != 40 {
		t.Fatalf("Stats(K5) = %+v", s)
	}
	if s := Stats(Subtask{}); s != (SubtaskStats{}) {
		t.Fatalf("Stats of nil views = %+v, want zero", s)
	}
}
