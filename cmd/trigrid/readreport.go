package main

import (
	"fmt"
	"io"

	"github.com/trigrid/trigrid/pipeline"
)

// noteNoEdges says on w when path gave a graph without edges: the count
// of 0 is right, but a file that held none is seldom what was meant.
func noteNoEdges(w io.Writer, path string, rep *pipeline.Report) {
	if rep.Edges > 0 {
		return
	}
	if path == "-" {
		path = "standard input"
	}
	why := ""
	if in := rep.Input; in != nil {
		switch {
		case in.RawEdges == 0 && rep.Removed != nil && rep.Removed.BadLines > 0:
			why = fmt.Sprintf(": every line was bad and skipped (%s)", nouns(uint64(rep.Removed.BadLines), "bad line"))
		case in.RawEdges == 0:
			why = ": the file holds none"
		default:
			why = fmt.Sprintf(": its %s are all self-loops", nouns(uint64(in.RawEdges), "raw edge"))
		}
	}
	fmt.Fprintf(w, "trigrid: no edges in %s%s; 0 triangles\n", path, why)
}
