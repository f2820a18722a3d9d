package kernels

// SubtaskStats are the O(1) figures of a subtask that kernel choice and
// work estimates use. They are read from the CSR headers only.
type SubtaskStats struct {
	// Edges is IJ's edge count: the number of intersections.
	Edges int64
	// Rows is IJ's row count (the I-local space).
	Rows int64
	// IKEdges and JKEdges are the sizes of the two intersected blocks.
	IKEdges, JKEdges int64
	// KCols is the K-local column space, the bits of a marker bitset.
	KCols int64
	// MeanIK and MeanJK are the mean row lengths of IK and JK: the lists
	// hashcol and hash probe, respectively.
	MeanIK, MeanJK float64
	// SameIJIK is set when IK is IJ itself (the whole graph, or a subtask
	// (I, J, J) whose two blocks are one), which gives hashcol its tail
	// path.
	SameIJIK bool
	// Clip is set when the subtask carries a clip (Subtask.Clip), which
	// gives hashcol its tail path on any blocks.
	Clip bool
	// Wedges estimates the list elements the intersections touch:
	// Edges times the mean IK and JK row lengths. It is exact in
	// expectation only when degrees are independent of the edges that use
	// them, which skewed graphs are not; it is a scale, not a promise.
	Wedges float64
}

// Stats returns the statistics of t. Nil views count as empty.
func Stats(t Subtask) SubtaskStats {
	var s SubtaskStats
	if t.IJ == nil || t.IK == nil || t.JK == nil {
		return s
	}
	s.Edges, s.Rows = t.IJ.NumEdges(), t.IJ.NumRows()
	s.IKEdges, s.JKEdges = t.IK.NumEdges(), t.JK.NumEdges()
	s.KCols = kColumns(t)
	s.MeanIK, s.MeanJK = mean(s.IKEdges, t.IK.NumRows()), mean(s.JKEdges, t.JK.NumRows())
	s.SameIJIK = t.IJ == t.IK
	s.Clip = t.Clip
	s.Wedges = float64(s.Edges) * (s.MeanIK + s.MeanJK)
	return s
}

func mean(edges, rows int64) float64 {
	if rows == 0 {
		return 0
	}
	return float64(edges) / float64(rows)
}
