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

// smallSubtaskEdges is the IJ edge count under which a subtask is bound by
// launch latency and its heaviest block rather than by throughput. There
// polak's single light kernel wins: on soc-Epinions1 (0.41M edges) polak
// took 0.073 ms and wetric 0.095 ms. At about 0.95M edges per block (rmat18
// at P = 2) wetric already led, 2.36 ms against polak's 2.48 ms over the 8
// subtasks, and from rmat18 whole (3.8M edges) up wetric was at least 1.9
// times faster than every other kernel (docs/kernels.md, H200, 2026-11-21).
// 2^19 sits between the two.
const smallSubtaskEdges = 1 << 19

// chooseKernel is the GPU `auto` choice for one subtask, a pure function of
// its statistics so that it is testable without a GPU. It returns one of
// "wetric", "trust", "trix", "grouptc", "polak".
//
// Measured on an H200 (docs/kernels.md): wetric was the fastest kernel on
// every subtask set of about 2^20 edges or more, whole graphs (rmat18 to
// rmat23, 1.9 to 2.3 times the next best) and the 64 subtasks of rmat22 at
// P = 4 (46.8 ms in all against polak's 88.9 ms); polak was the fastest on
// the small whole graph. trust, trix and grouptc were never the fastest, so auto
// never picks them; they stay available by name.
func chooseKernel(s SubtaskStats) string {
	if s.Edges <= 0 || s.IKEdges <= 0 || s.JKEdges <= 0 {
		// Nothing to intersect: the cheapest launch.
		return "polak"
	}
	if s.Edges < smallSubtaskEdges {
		return "polak"
	}
	return "wetric"
}
