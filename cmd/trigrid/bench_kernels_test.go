package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/kernels/gpu"
)

// The table gives a small graph's kernel time to a tenth of a
// microsecond and a large one's to a microsecond.
func TestPrintBenchDecimals(t *testing.T) {
	cmd := &cobra.Command{}
	var out bytes.Buffer
	cmd.SetOut(&out)
	rows := []gpu.BenchRow{
		{Graph: "small", Kernel: "auto", Ran: "wetric", MedianMS: 0.025792, MinMS: 0.02531, MaxMS: 0.0261, WallMS: 0.042, Runs: 9, Triangles: 1624481, OK: true},
		{Graph: "large", Kernel: "auto", Ran: "wetric", MedianMS: 13.3751, MinMS: 13.37, MaxMS: 13.4, WallMS: 13.42, Runs: 9, Triangles: 2109057696, OK: true},
	}
	if err := printBench(cmd, rows, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and two rows:\n%s", len(lines), out.String())
	}
	for _, want := range []string{"0.0258", "0.0253", "0.0261", "0.0420", "1624481"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("small row %q lacks %s", lines[1], want)
		}
	}
	for _, want := range []string{"13.375", "13.370", "13.400", "13.420"} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("large row %q lacks %s", lines[2], want)
		}
	}
}
