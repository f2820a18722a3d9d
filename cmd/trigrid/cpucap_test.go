package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
)

// TestCPUDeviceMemLimit: on the CPU, --device-mem-limit bounds a subtask
// as on a GPU. A graph that does not fit it whole is counted in blocks, P
// chosen as --partitions 0 chooses it, exactly; a cap below the least that
// can count the graph is refused naming that least and its P, with or
// without --partitions 0 (and for a P given, that P's least), and that
// least then counts it.
func TestCPUDeviceMemLimit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "r.bin")
	if _, _, err := run(t, "gen", "rmat", "--scale", "15", "--edge-factor", "16", "--seed", "4", "-o", bin, "-q"); err != nil {
		t.Fatal(err)
	}
	want := countJSON(t, bin)
	// The CPU's subtasks need 1 MiB beside their blocks: a graph of a few
	// MiB has caps below its CSR that its blocks fit.
	csr := 8*(want.Vertices+1) + 4*want.Edges
	capped := csr * 3 / 4
	got := countJSON(t, "--device-mem-limit", fmt.Sprint(capped), bin)
	if got.Partition == nil || got.Partition.P <= 1 {
		t.Errorf("a cap of 3/4 of the CSR (%d bytes): counted whole (partition %+v)", capped, got.Partition)
	}
	if got.Triangles != want.Triangles {
		t.Errorf("a cap of 3/4 of the CSR: %d triangles, want %d", got.Triangles, want.Triangles)
	}
	if big := countJSON(t, "--device-mem-limit", fmt.Sprint(64*csr), bin); big.Partition != nil {
		t.Errorf("a cap the graph fits: counted in blocks (partition %+v)", big.Partition)
	}
	re := regexp.MustCompile(`^--device-mem-limit 1KiB is below the least that can count this graph: (\d+) bytes \(P=(\d+)\)`)
	// Without --partitions and with a P given by default (under the race
	// detector, where each count of this graph takes seconds, without
	// --partitions only); --partitions 0, which chooses P as no flag
	// does, in the long run.
	extras := [][]string{nil, {"--partitions", "2"}}
	switch {
	case testlong.Enabled():
		extras = append(extras, []string{"--partitions", "0"})
	case raceEnabled:
		extras = extras[:1]
	}
	for _, extra := range extras {
		args := append([]string{"count", "--device", "cpu", "--progress", "none", "--device-mem-limit", "1KiB"}, extra...)
		_, _, err := run(t, append(args, bin)...)
		if err == nil {
			t.Fatalf("%v: a 1 KiB cap was accepted", extra)
		}
		m := re.FindStringSubmatch(err.Error())
		if m == nil {
			t.Fatalf("%v: error %q does not name the least", extra, err)
		}
		least, _ := strconv.ParseInt(m[1], 10, 64)
		p, _ := strconv.Atoi(m[2])
		at := countJSON(t, append([]string{"--device-mem-limit", m[1]}, append(extra, bin)...)...)
		if at.Triangles != want.Triangles || p > 1 && (at.Partition == nil || at.Partition.P != p) {
			t.Errorf("%v: at the least, %d bytes: %d triangles (want %d), partition %+v (want P=%d)",
				extra, least, at.Triangles, want.Triangles, at.Partition, p)
		}
		if _, _, err := run(t, append(append([]string{"count", "--device", "cpu", "--progress", "none", "--device-mem-limit", fmt.Sprint(least - 1)}, extra...), bin)...); err == nil {
			t.Errorf("%v: a byte below the least, %d, was accepted", extra, least-1)
		}
	}
}
