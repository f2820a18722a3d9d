package gpu

// SubtaskStats is what the loader knows about one subtask (I, J, K) before
// it runs: the sizes and longest rows of its three blocks, all computed on
// the host when the blocks are loaded. Edges and Rows describe IJ, the block
// whose edges are intersected; MaxDegree is the longest row of IK (the lists
// that are hashed or enumerated); JK is the block searched.
type SubtaskStats struct {
	Rows, Edges, MaxDegree int64
	// IKEdges and JKEdges are the edge counts of IK and JK.
	IKEdges, JKEdges int64
	// JKMaxDegree is the longest row of JK.
	JKMaxDegree int64
}

// smallSubtaskEdges and denseRowDegree mark the subtasks bound by launch
// latency rather than by throughput: few edges and short rows, where
// polak's single light kernel wins. With rows of 8 or more on average
// wetric's dense-row bitmaps already pay, and from 2^17 edges wetric leads
// whatever the rows. The measurements behind both thresholds (small SNAP
// graphs and rmat) are in docs/decisions/2026-11-21-gpu-auto-kernel-rules.md.
const (
	smallSubtaskEdges = 1 << 17
	denseRowDegree    = 8
)

// chooseKernel is the GPU `auto` choice for one subtask, a pure function of
// its statistics so that it is testable without a GPU. It returns one of
// "wetric", "trust", "trix", "grouptc", "polak".
//
// Measured on an H200 (docs/decisions/2026-11-21-gpu-auto-kernel-rules.md):
// wetric was the fastest kernel on
// every graph of 2^17 edges or more and on every graph with rows of 8 or
// more on average, whole graphs and partitions; polak on the small sparse
// ones. trust, trix and grouptc were never the fastest, so auto never picks
// them; they stay available by name.
func chooseKernel(s SubtaskStats) string {
	if s.Edges <= 0 || s.IKEdges <= 0 || s.JKEdges <= 0 {
		// Nothing to intersect: the cheapest launch.
		return "polak"
	}
	if s.Edges < smallSubtaskEdges && s.Edges < denseRowDegree*max(s.Rows, 1) {
		return "polak"
	}
	return "wetric"
}
