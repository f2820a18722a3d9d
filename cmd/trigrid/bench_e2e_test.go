package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testgraphs"
	"github.com/trigrid/trigrid/pipeline"
)

// benchE2E runs `bench e2e` in this process; its child counts are this
// test binary run as trigrid (asMainEnv), so no binary is built.
func benchE2E(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv(asMainEnv, "1")
	return run(t, append([]string{"bench", "e2e"}, args...)...)
}

// The bench's counts are checked against a brute-force count of the same
// messy edge list (sparse 64-bit ids, duplicates, self-loops) and against
// SNAP's published count of ca-GrQc; every run is a separate process with
// its own rusage.
func TestBenchE2ECountsAndPhases(t *testing.T) {
	text, edges := messyGraph(7, 400, 5000)
	messy := write(t, "messy.txt", text)
	want := testgraphs.LocalCounts(edges)
	out, stderr, err := benchE2E(t, "--runs", "2", "--json", "--device", "cpu", messy, "../../testdata/ca-GrQc.txt.gz", "--", "--order", "degeneracy")
	if err != nil {
		t.Fatalf("bench e2e: %v\n%s", err, stderr)
	}
	var rows []E2ERow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(rows), out)
	}
	if got := rows[0]; got.Triangles != want.Total || got.Edges != int64(len(want.Support)) {
		t.Errorf("messy graph: %d triangles in %d edges, brute force %d in %d", got.Triangles, got.Edges, want.Total, len(want.Support))
	}
	if got := rows[1]; got.Triangles != 48260 || got.Edges != 14484 {
		t.Errorf("ca-GrQc: %d triangles in %d edges, SNAP says 48260 in 14484", got.Triangles, got.Edges)
	}
	for _, r := range rows {
		if r.Runs != 2 || r.Device != "cpu" {
			t.Errorf("%s: runs %d on %q, want 2 on cpu", r.Graph, r.Runs, r.Device)
		}
		// A whole process includes its in-process phases; its rusage is
		// its own, at least the few MiB any Go program touches.
		if r.Whole < r.Read+r.Clean+r.Order || r.Whole < r.Total || r.Total <= 0 || r.Outside <= 0 || r.Outside >= r.Whole {
			t.Errorf("%s: whole process %.4fs, total %.4fs, phases %.4f+%.4f+%.4f", r.Graph, r.Whole, r.Total, r.Read, r.Clean, r.Order)
		}
		if r.WholeMin > r.Whole || r.Whole > r.WholeMax {
			t.Errorf("%s: median %.4f outside [%.4f, %.4f]", r.Graph, r.Whole, r.WholeMin, r.WholeMax)
		}
		if r.PeakBytes < 1<<20 || r.CPU <= 0 || r.InputBytes <= 0 {
			t.Errorf("%s: host peak %d B, cpu %.4fs, input %d B", r.Graph, r.PeakBytes, r.CPU, r.InputBytes)
		}
	}

	// The table for people names the graph and its count.
	var b strings.Builder
	cmd := newRootCommand()
	cmd.SetOut(&b)
	if err := printE2E(cmd, rows, false); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"messy.txt", "ca-GrQc.txt.gz", "whole process s", "(outside s)", "(device wait s)", "host peak", fmt.Sprint(want.Total), "48260"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

// A run that fails stops the bench with the child's own message (file and
// line); so do bad flags, before any run.
func TestBenchE2EErrors(t *testing.T) {
	bad := write(t, "bad.txt", "1 2\n2 x\n")
	_, _, err := benchE2E(t, "--runs", "2", "--device", "cpu", bad)
	if err == nil || !strings.Contains(err.Error(), "bad.txt") || !strings.Contains(err.Error(), "run 1") || !strings.Contains(err.Error(), ":2") {
		t.Errorf("bad line: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--runs", "0", bad}, "--runs 0"},
		{[]string{"--workers", "-1", bad}, "--workers -1"},
		{[]string{filepath.Join(t.TempDir(), "missing.bin")}, "missing.bin"},
		{[]string{"--", "--order", "degree"}, "at least one FILE"},
	} {
		_, _, err := benchE2E(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench e2e %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

func TestE2EMedian(t *testing.T) {
	rep := func(tri uint64, read float64) *pipeline.Report {
		return &pipeline.Report{Triangles: tri, Edges: 10, Seconds: pipeline.Phases{Read: read}}
	}
	runs := []e2eRun{
		{Report: rep(5, 3), Wall: 3 * time.Second, PeakRSS: 30},
		{Report: rep(5, 1), Wall: 1 * time.Second, PeakRSS: 10},
		{Report: rep(5, 2), Wall: 9 * time.Second, PeakRSS: 20},
	}
	for i, total := range []float64{2.5, 0.5, 1} {
		runs[i].Report.Seconds.Total = total
	}
	row, err := e2eMedian("g", runs)
	if err != nil {
		t.Fatal(err)
	}
	if row.Read != 2 || row.Whole != 3 || row.WholeMin != 1 || row.WholeMax != 9 || row.PeakBytes != 20 || row.Triangles != 5 || row.Outside != 0.5 {
		t.Errorf("row %+v", row)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", m)
	}
	runs[2].Report = rep(6, 2)
	if _, err := e2eMedian("g", runs); err == nil || !strings.Contains(err.Error(), "run 3 counted 6") {
		t.Errorf("disagreeing runs: %v", err)
	}
}
