package kernels

import (
	"fmt"

	"github.com/trigrid/trigrid/graph"
)

// checkSubtask is the cheap, O(1) shape check every CPU kernel runs before
// counting. It catches the mistakes a caller makes when wiring blocks
// together (nil views, offsets that do not match their columns, IJ columns
// that point past JK's rows). It does not look at every column: sortedness
// and column ranges are graph.CSR.Validate's job, done once where data
// crosses a trust boundary. A kernel that nevertheless meets a malformed
// block turns the resulting runtime fault into an error (see runParallel),
// so no input makes a kernel panic; the count it would have produced for
// such input is undefined, which is why the fault is an error and never a
// number.
func checkSubtask(t Subtask) error {
	for _, v := range []struct {
		name string
		c    *graph.CSR
	}{{"IJ", t.IJ}, {"IK", t.IK}, {"JK", t.JK}} {
		if v.c == nil {
			return fmt.Errorf("%s is nil", v.name)
		}
		if err := checkEnds(v.c); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
	}
	if isEmpty(t) {
		return nil
	}
	if t.IK.NumRows() < t.IJ.NumRows() {
		return fmt.Errorf("IK has %d rows but IJ has %d (both are I-local)", t.IK.NumRows(), t.IJ.NumRows())
	}
	if t.IJ.NCols > t.JK.NumRows() {
		return fmt.Errorf("IJ has %d columns but JK only %d rows (both are J-local)", t.IJ.NCols, t.JK.NumRows())
	}
	if t.IK.NCols < 0 || t.IK.NCols > 1<<32 || t.JK.NCols < 0 || t.JK.NCols > 1<<32 {
		return fmt.Errorf("column counts of the K-local space %d (IK) and %d (JK) out of range", t.IK.NCols, t.JK.NCols)
	}
	return nil
}

// checkEnds checks the two offsets that slicing relies on first and last.
func checkEnds(c *graph.CSR) error {
	if len(c.Offsets) == 0 {
		if len(c.Cols) != 0 {
			return fmt.Errorf("%d columns but no offsets", len(c.Cols))
		}
		return nil
	}
	if c.Offsets[0] != 0 {
		return fmt.Errorf("first offset is %d, want 0", c.Offsets[0])
	}
	if last := c.Offsets[len(c.Offsets)-1]; last != uint64(len(c.Cols)) {
		return fmt.Errorf("last offset is %d but there are %d columns", last, len(c.Cols))
	}
	return nil
}

// isEmpty reports whether some view has no edges, in which case no triangle
// can close and the shapes of the other views do not matter. Partitioners
// may represent an empty block by a zero-value CSR with no rows at all.
func isEmpty(t Subtask) bool {
	return t.IJ.NumEdges() == 0 || t.IK.NumEdges() == 0 || t.JK.NumEdges() == 0
}

// kColumns is the size of the K-local space a marker bitset must cover.
func kColumns(t Subtask) int64 { return max(t.IK.NCols, t.JK.NCols) }
