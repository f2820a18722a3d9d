package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
)

// Counts under device-memory caps from 1/64 of the CSR to twice it (the
// default run: 1/20 and the CSR of a smaller graph) are
// exact, with P chosen by the device's accounting (--partitions 0) and with
// P given; a cap below the least that fits is an error giving that least.
func TestOutOfCoreThroughDeviceLibrary(t *testing.T) {
	lib := deviceLibrary(t)
	scale, divs := "9", []int64{20, 1}
	if testlong.Enabled() || os.Getenv("TRIGRID_CUDA_LIB") != "" {
		scale, divs = "13", []int64{64, 20, 4, 1, 0}
	}
	bin := filepath.Join(t.TempDir(), "r.bin")
	if _, _, err := run(t, "gen", "rmat", "--scale", scale, "--edge-factor", "8", "--seed", "5", "-o", bin, "-q"); err != nil {
		t.Fatal(err)
	}
	want := countJSON(t, "--kernel", "reference", bin)
	csr := 8*(want.Vertices+1) + 4*want.Edges
	for _, div := range divs {
		for _, extra := range [][]string{{"--partitions", "0"}, {"--partitions", "3"}, {"--partitions", "3", "--row-stream", "on"}} {
			limit := 2 * csr // div 0: twice the CSR
			if div > 0 {
				limit = csr / div
			}
			// Below the least that fits, the error gives the least; that
			// cap (the least of one subtask, for a given P) then counts, or
			// names a larger least.
			for round := 0; ; round++ {
				args := append([]string{"--device", "gpu", "--cuda-lib", lib, "--device-mem-limit", fmt.Sprint(limit)}, extra...)
				out, stderr, err := run(t, append(append([]string{"count", "--json", "--progress", "none"}, args...), bin)...)
				if err == nil {
					got := decodeReport(t, out)
					if got.Triangles != want.Triangles {
						t.Errorf("cap CSR/%d (%d bytes) %v: %d triangles, want %d", div, limit, extra, got.Triangles, want.Triangles)
					}
					if d := got.DeviceMemory; d == nil || d.PeakBytes == 0 || d.PeakBytes > uint64(limit) || d.CopiedBytes == 0 ||
						d.IdleShare < 0 || d.IdleShare > 1 || d.UploadsAhead < 0 || d.UploadsAhead > d.Uploads {
						t.Errorf("cap CSR/%d (%d bytes) %v: device figures %+v", div, limit, extra, d)
					}
					// Streaming rows with room to spare streams every subtask
					// with edges.
					if len(extra) > 2 && div <= 1 && (!got.Partition.RowStream || got.DeviceMemory.StreamedSubtasks == 0) {
						t.Errorf("cap CSR/%d (%d bytes) %v: nothing streamed: %+v", div, limit, extra, got.DeviceMemory)
					}
					// P = 0 reports the smallest P that fits; the P chosen for
					// speed lies between it and twice it.
					if p := got.Partition; extra[1] == "0" && (p == nil || p.PFit < 1 || p.P < p.PFit || p.P > 2*p.PFit) {
						t.Errorf("cap CSR/%d (%d bytes) %v: partition %+v", div, limit, extra, p)
					}
					break
				}
				least := statedLeast(err.Error())
				if least <= limit || round == 20 {
					t.Fatalf("cap CSR/%d (%d bytes) %v: %v\n%s", div, limit, extra, err, stderr)
				}
				limit = least
			}
		}
	}
}

// statedLeast reads the least memory an out-of-memory error states, or 0.
func statedLeast(msg string) int64 {
	for _, says := range []string{"the least that fits is ", "the least that fits is about ", "needs at least ", "the least that can count this graph: "} {
		if i := strings.Index(msg, says); i >= 0 {
			var n int64
			if _, err := fmt.Sscanf(msg[i+len(says):], "%d", &n); err == nil {
				return n
			}
		}
	}
	return 0
}
