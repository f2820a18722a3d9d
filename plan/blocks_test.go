package plan

import (
	"strings"
	"testing"
)

// The P of --partitions 0 (2026-11-24-blocks-pinned-in-place.md): the
// smallest that fits unless a larger P, within twice it, is modelled
// faster by more than a quarter.
func TestChooseP(t *testing.T) {
	// seconds falls to a floor at P = 6, then rises: 6 is the fastest.
	valley := func(p int) float64 { return map[int]float64{3: 10, 4: 8, 5: 7.6, 6: 5, 7: 5.5, 8: 7}[p] }
	flat := func(p int) float64 { return 10 - 0.1*float64(p) } // never a quarter faster
	for _, tc := range []struct {
		name string
		r    PRequest
		want int
		why  string
	}{
		{"not modelled", PRequest{Fit: 3}, 3, "smallest P"},
		{"cpu or several GPUs", PRequest{Fit: 3, Seconds: valley, Useful: 100}, 3, "smallest P"},
		{"one GPU, a faster P", PRequest{Fit: 3, Modelled: true, Seconds: valley, Useful: 100}, 6, "shortest modelled"},
		{"one GPU, nothing a quarter faster", PRequest{Fit: 3, Modelled: true, Seconds: flat, Useful: 100}, 3, "no larger P"},
		{"useful P caps the search", PRequest{Fit: 3, Modelled: true, Seconds: valley, Useful: 5}, 3, "no larger P"},
		{"twice the fit caps the search", PRequest{Fit: 2, Modelled: true, Seconds: func(p int) float64 { return 10 / float64(p*p) }, Useful: 100}, 4, "shortest modelled"},
		{"beyond the modelled bound", PRequest{Fit: MaxModelledP, Modelled: true, Seconds: valley, Useful: 1000}, MaxModelledP, "smallest P"},
	} {
		p, why := ChooseP(tc.r)
		if p != tc.want || !strings.Contains(why.Why, tc.why) || why.Record != recPinned || why.Choice == "" {
			t.Errorf("%s: P %d (%+v), want %d with a reason saying %q", tc.name, p, why, tc.want, tc.why)
		}
	}
}

// Row streaming on one GPU (2026-11-24-row-ranges-over-blocks.md): auto
// streams exactly when the three blocks and an index exceed the room but
// one block with its index, the scratch and two sets of ranges fit.
func TestChooseRowStream(t *testing.T) {
	const mib = 1 << 20
	gpu := BlockFigures{OneGPU: true, Budget: 1024 * mib, ContextBytes: 24 * mib, IndexShare: 0.8}
	blk := func(b uint64) BlockFigures { f := gpu; f.LargestBytes = b; return f }
	room := float64(1000 * mib)
	for _, tc := range []struct {
		name string
		b    BlockFigures
		mode StreamMode
		want bool
	}{
		{"three blocks fit", blk(uint64(room / 3.8)), StreamAuto, false},
		{"three blocks do not fit, one streamed does", blk(uint64(room/3.8) + mib), StreamAuto, true},
		// (1.8 + 0.5) b + room/16 <= room: b up to 0.4076 room.
		{"largest that streams", blk(uint64(room * 15 / 16 / 2.3)), StreamAuto, true},
		{"too large even streamed", blk(uint64(room*15/16/2.3) + mib), StreamAuto, false},
		{"on forces", blk(1), StreamOn, true},
		{"off refuses", blk(uint64(room / 3)), StreamOff, false},
		{"no budget", BlockFigures{OneGPU: true, LargestBytes: mib}, StreamAuto, false},
		{"not one GPU", BlockFigures{LargestBytes: uint64(room / 3), Budget: gpu.Budget}, StreamOn, false},
	} {
		on, why := ChooseRowStream(tc.b, tc.mode)
		if on != tc.want || why.Choice != map[bool]string{true: "row-stream=on", false: "row-stream=off"}[tc.want] || why.Why == "" {
			t.Errorf("%s: %v (%+v), want %v", tc.name, on, why, tc.want)
		}
	}
}

// Ids numbered early stay marked for the device only when its pieces can
// take them (2026-11-24-ids-mapped-on-the-device.md).
func TestChooseKeepMarks(t *testing.T) {
	g := GraphStats{Pairs: 1 << 30, PrepBytes: 1 << 35}
	r := Request{Degree: true, Kernel: "auto", DeviceLimit: 1 << 30}
	pending := DeviceCaps{MaybeGPU: true, Devices: 1}
	if p := Choose(g, pending, r); !p.Early || p.KeepMarks {
		t.Fatalf("before numbering: early %v, keep marks %v", p.Early, p.KeepMarks)
	}
	g.Marked = true
	if p := Choose(g, pending, r); !p.Early || p.KeepMarks || !hasChoice(p, "rewrite-ids") {
		t.Errorf("marks that do not fit: keep %v, reasons %+v", p.KeepMarks, p.Reasons)
	}
	g.MarksFit = true
	if p := Choose(g, pending, r); !p.Early || !p.KeepMarks || !hasChoice(p, "keep-marks") {
		t.Errorf("marks that fit: keep %v, reasons %+v", p.KeepMarks, p.Reasons)
	}
	// Not early (the pairs fit whole): nothing is numbered, nothing kept.
	g.PrepBytes = 1 << 20
	if p := Choose(g, pending, r); p.Early || p.KeepMarks {
		t.Errorf("pairs that fit: early %v, keep %v", p.Early, p.KeepMarks)
	}
}

func hasChoice(p Plan, choice string) bool {
	for _, r := range p.Reasons {
		if r.Choice == choice {
			return true
		}
	}
	return false
}
