package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/pipeline"
)

// perVertexFlags are count's flags for per-vertex and per-edge results.
type perVertexFlags struct {
	vertices, edges string
	top             int
	clustering      bool
}

func (f *perVertexFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.vertices, "per-vertex", "", "write per-vertex triangles, degree and local clustering to this file (.tsv, .tsv.gz, .tsv.zst, .bin, .parquet)")
	cmd.Flags().StringVar(&f.edges, "per-edge", "", "write the triangle support of every edge to this file (same formats as --per-vertex)")
	cmd.Flags().IntVar(&f.top, "top", 0, "list the K vertices with the most triangles and the K edges with the highest support")
	cmd.Flags().BoolVar(&f.clustering, "clustering", false, "count per vertex for the average clustering coefficient even without output files")
}

// options checks the flags and turns them into counts.Options; files is
// the number of graph files given (one output file cannot take several).
// The paths are checked against each other; checkPaths checks them
// against the inputs.
func (f *perVertexFlags) options(files int) (counts.Options, error) {
	o := counts.Options{VerticesFile: f.vertices, EdgesFile: f.edges, Top: f.top, Clustering: f.clustering}
	if f.top < 0 {
		return o, fmt.Errorf("--top %d: must be 0 or more", f.top)
	}
	if files > 1 && (f.vertices != "" || f.edges != "") {
		return o, fmt.Errorf("--per-vertex and --per-edge take one graph FILE, not %d", files)
	}
	if err := o.Check(); err != nil {
		flag := "--per-vertex"
		if _, _, e := counts.FormatOf(f.vertices); f.vertices == "" || e == nil {
			flag = "--per-edge"
		}
		return o, fmt.Errorf("%s: %w", flag, err)
	}
	return o, f.checkPaths()
}

// checkPaths refuses --per-vertex and --per-edge paths that are one of
// inputs (the graph files, or the shard store, of the count), lie in an
// input directory, are one file, or lie in a directory that does not exist
// (checkOutputPaths). options checks them without inputs; a command that
// has inputs calls it with them too.
func (f *perVertexFlags) checkPaths(inputs ...string) error {
	return checkOutputPaths(inputs, outputFile{"--per-vertex", f.vertices}, outputFile{"--per-edge", f.edges})
}

// printPerVertex adds the report's rows for transitivity and, when
// counted, per-vertex results.
func printPerVertex(row func(k, v string), rep *pipeline.Report) {
	row("transitivity", strconv.FormatFloat(rep.Transitivity, 'f', 6, 64)+" (3 x triangles / wedges)")
	if rep.AverageClustering != nil {
		row("clustering", strconv.FormatFloat(*rep.AverageClustering, 'f', 6, 64)+" (average local; degree < 2 counts 0)")
	}
	if rep.PerVertex != nil {
		printCountsSummary(row, rep.PerVertex)
	}
}

// printCountsSummary adds the rows of the files written and the top
// vertices and edges.
func printCountsSummary(row func(k, v string), s *counts.Summary) {
	if s.VerticesFile != "" {
		row("per vertex", fmt.Sprintf("%s (%s rows)", s.VerticesFile, commas(uint64(s.VerticesRows))))
	}
	if s.EdgesFile != "" {
		row("per edge", fmt.Sprintf("%s (%s rows)", s.EdgesFile, commas(uint64(s.EdgesRows))))
	}
	for i, v := range s.TopVertices {
		k := ""
		if i == 0 {
			k = "top vertices"
		}
		row(k, fmt.Sprintf("%d: %s triangles, degree %s, clustering %.6f", v.ID, commas(v.Triangles), commas(v.Degree), v.Clustering))
	}
	for i, e := range s.TopEdges {
		k := ""
		if i == 0 {
			k = "top edges"
		}
		row(k, fmt.Sprintf("%d-%d: support %s", e.U, e.V, commas(e.Support)))
	}
}
