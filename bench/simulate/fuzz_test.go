package simulate

import (
	"encoding/json"
	"testing"

	"github.com/trigrid/trigrid/bench/scale"
)

// Block statistics files are checked before use: whatever the bytes,
// decoding never panics, and statistics it accepts aggregate at every
// divisor to grids whose blocks sum to the edges.
func FuzzDecodeBlockStats(f *testing.F) {
	f.Add([]byte(`{"kind":"trigrid-block-stats","format":1,"vertices":10,"edges":6,"fine_p":2,"block_edges":[1,2,0,3]}`))
	f.Add([]byte(`{"kind":"trigrid-block-stats","format":1,"vertices":0,"edges":0,"fine_p":1,"block_edges":[0]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBlockStats("fuzz", data)
		if err != nil {
			return
		}
		for _, p := range b.Divisors() {
			g, err := b.Aggregate(p)
			if err != nil {
				continue
			}
			var sum int64
			for _, e := range g.BlockEdges {
				sum += e
			}
			if sum != b.Edges {
				t.Fatalf("P = %d: blocks hold %d edges of %d", p, sum, b.Edges)
			}
		}
	})
}

// Cost models and bench scale reports are checked before a simulation:
// whatever they hold, fitting, validating and simulating return an error
// or a result, never a panic.
func FuzzModelAndReport(f *testing.F) {
	f.Add([]byte(`{"kind":"trigrid-cost-model","format":1,"kernel_ns_per_work":5,"prefetch":1,"cache_bytes":100}`),
		[]byte(`{"format":1,"scheme":"hash","p":2,"vertices":2,"edges":4,"group_sizes":[1,1],"block_edges":[1,2,0,1],`+
			`"runs":[{"workers":1,"job_s":1,"kernel_s":0.5,"decode_s":0.1}],"rows":[{"workers":1,"job_s":1}]}`))
	f.Fuzz(func(t *testing.T, model, report []byte) {
		var rep scale.Report
		if json.Unmarshal(report, &rep) != nil {
			return
		}
		for _, r := range rep.Runs {
			if r.Workers > 64 {
				return // bounded work per input
			}
		}
		for _, r := range rep.Rows {
			if r.Workers > 64 {
				return
			}
		}
		if m, err := DecodeModel("fuzz", model); err == nil {
			_, _ = Validate(&rep, m, DefaultTolerance)
		}
		if m, err := Fit(&rep, nil); err == nil {
			_, _ = Validate(&rep, m, DefaultTolerance)
		}
	})
}
