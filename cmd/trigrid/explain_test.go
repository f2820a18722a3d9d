package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/pipeline"
	"github.com/trigrid/trigrid/plan"
)

// `count --json` carries the plan the count ran; `count --explain` prints
// a plan with its reasons and counts nothing.
func TestCountPlanAndExplain(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz")
	rep := countJSON(t, file)
	if rep.Plan == nil || rep.Plan.Layout != plan.Whole || rep.Plan.Clean != plan.Host || len(rep.Plan.Reasons) == 0 {
		t.Fatalf("--json plan %+v: want a whole count cleaned on the host, with reasons", rep.Plan)
	}
	out, stderr, err := run(t, "count", "--explain", "--progress", "none", "--device", "cpu", file)
	if err != nil {
		t.Fatalf("count --explain: %v\n%s", err, stderr)
	}
	for _, want := range []string{"layout       whole", "clean        host", "why:", "docs/decisions/2026-11-24-host-forward-build.md"} {
		if !strings.Contains(out, want) {
			t.Errorf("--explain output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "triangles") {
		t.Errorf("--explain counted:\n%s", out)
	}
	out, stderr, err = run(t, "count", "--explain", "--json", "--progress", "none", "--device", "cpu", "--partitions", "2", file)
	if err != nil {
		t.Fatalf("count --explain --json: %v\n%s", err, stderr)
	}
	var e pipeline.Explanation
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("bad JSON %q: %v", out, err)
	}
	if e.Plan.Layout != plan.Partitioned || e.Plan.P != 2 || !e.Stats.Estimated || e.Stats.Pairs == 0 {
		t.Fatalf("--explain --json -P 2: %+v", e)
	}
}
