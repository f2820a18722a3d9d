package pipeline

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/plan"
)

// Explanation is the plan of a count of one file, chosen without reading
// it: from the file's size and the counter's capabilities.
type Explanation struct {
	File   string          `json:"file"`
	Device string          `json:"device,omitempty"`
	Kernel string          `json:"kernel"`
	Stats  plan.GraphStats `json:"stats"`
	Caps   plan.DeviceCaps `json:"caps"`
	Plan   plan.Plan       `json:"plan"`
}

// Explain chooses the plan of a count of path with cfg (CountFile's, or
// CountFilePartitioned's when cfg.P is not 1) without counting: the
// counter is made (after cfg.Devices when set) and asked what it can do,
// and the graph's figures are estimated from the file's size
// (estimatePairs), one forward edge a pair and one vertex for every
// estimatedDegree pairs. A count of the file may choose otherwise where
// the graph read differs from the estimate, or a device declines a step;
// its report's plan is the one it ran.
func Explain(ctx context.Context, path string, cfg Config) (*Explanation, error) {
	if err := cfg.check(true); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	cfg.partitioned = cfg.P != 1
	dev := startCounter(ctx, &cfg)
	counter, err := dev.wait(&cfg)
	if err != nil {
		return nil, err
	}
	defer closeCounter(counter, cfg.Logger)
	pairs := estimatePairs(path, fi.Size())
	g := pairStats(pairs)
	rows := int64(pairs / estimatedDegree)
	g.Forward, g.Rows, g.Edges, g.Estimated = true, rows, int64(pairs), true
	g.DeviceBytes = uint64(gpu.BlockBytes(rows, int64(pairs)))
	g.HostFits = cfg.DeviceLimit == 0 || fitsHostSize(rows, int64(pairs), cfg.DeviceLimit)
	caps := capsOf(counter, dev, &cfg)
	return &Explanation{File: path, Device: cfg.Device, Kernel: counter.Name(), Stats: g, Caps: caps,
		Plan: plan.Choose(g, caps, planRequest(&cfg, counter.Name()))}, nil
}

// estimatedDegree is the pairs a vertex Explain assumes.
const estimatedDegree = 8

// estimatePairs estimates the pairs of a file of size bytes named path: 8
// bytes a pair for a binary file (.bin), 16 for others (text lines of two
// ids); a compressed file (.gz, .bz2, .xz, .zst) counts four times its
// size.
func estimatePairs(path string, size int64) uint64 {
	for _, ext := range []string{".gz", ".bz2", ".xz", ".zst"} {
		if s, ok := strings.CutSuffix(path, ext); ok {
			path, size = s, 4*size
		}
	}
	if strings.HasSuffix(path, ".bin") {
		return uint64(size / 8)
	}
	return uint64(size / 16)
}

// String is the explanation for people: each choice of the plan, then the
// reasons, each with its decision record.
func (e *Explanation) String() string {
	var b strings.Builder
	p := e.Plan
	fmt.Fprintf(&b, "%s\n", e.File)
	row := func(k, v string) { fmt.Fprintf(&b, "  %-12s %s\n", k, v) }
	row("estimate", fmt.Sprintf("%d pairs from the file's size (%s)", e.Stats.Pairs, "a count reads the real figures and may choose otherwise"))
	row("device", fmt.Sprintf("%s, kernel %s", orNone(e.Device), e.Kernel))
	row("read", fmt.Sprintf("%s%s", p.Read, yes(p.Stage, ", staged on the device while read")))
	row("clean", fmt.Sprintf("%s%s%s", p.Clean, yes(p.FromIDs, ", from the input's own ids"), yes(p.Early, ", ids numbered while the device starts")))
	row("orient", fmt.Sprintf("%s%s", p.Orient, yes(p.MapIDs, ", ids mapped on the device")))
	layout := string(p.Layout)
	switch {
	case p.Resident:
		layout += ", resident on the device"
	case p.Layout == plan.Partitioned:
		layout += fmt.Sprintf(", P %d, scheme %s%s", p.P, p.Scheme, yes(p.DeviceSplit, ", split on the device"))
	}
	row("layout", layout)
	for _, f := range p.Fallbacks {
		row("fallback", f)
	}
	b.WriteString("  why:\n")
	for _, r := range p.Reasons {
		fmt.Fprintf(&b, "    %s: %s", r.Choice, r.Why)
		if r.Record != "" {
			fmt.Fprintf(&b, " (docs/decisions/%s)", r.Record)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func yes(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
