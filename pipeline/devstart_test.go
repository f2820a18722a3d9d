package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/worker"
)

// fakeIDDevice is a kernels.Device that also prepares the input's own
// ids: it cleans them on the host and can misreport the ids seen only in
// self-loops; graphs it cannot take go to the fakeDevice beneath
// (compacted on the host).
type fakeIDDevice struct {
	fakeDevice
	idPrepared  int
	idTooSmall  bool
	lieIsolated bool
	widths      []int // id width of each call
}

func (d *fakeIDDevice) Caps() kernels.DeviceCaps {
	return kernels.DeviceCaps{Prepare: true, PrepareIDs: true}
}

func (d *fakeIDDevice) PrepareResidentIDs(ctx context.Context, p kernels.IDPairs) (kernels.PrepStats, error) {
	if d.idTooSmall {
		return kernels.PrepStats{}, errTooBig
	}
	var edges []graph.Edge
	if p.P64 != nil {
		d.widths = append(d.widths, 8)
		for x := 0; x+1 < len(p.P64); x += 2 {
			edges = append(edges, graph.Edge{U: p.P64[x], V: p.P64[x+1]})
		}
	} else {
		d.widths = append(d.widths, 4)
		edges = graph.WidenPairs(p.P32, 1)
	}
	und, cs, err := graph.Clean(edges, graph.CleanOptions{Workers: 1})
	if err != nil {
		return kernels.PrepStats{}, err
	}
	fwd, _, os, err := graph.Orient(und, graph.OrderDegree, 1)
	if err != nil {
		return kernels.PrepStats{}, err
	}
	d.fwd = fwd
	d.idPrepared++
	st := kernels.PrepStats{Vertices: uint64(cs.Vertices), InputPairs: uint64(p.Pairs()), SelfLoops: cs.SelfLoops,
		Duplicates: cs.Duplicates, Edges: uint64(cs.Edges), Wedges: os.Wedges, MaxDegree: uint64(os.MaxDegree),
		MaxForward: uint64(os.MaxOutDegree), IsolatedIDs: cs.IsolatedIDs}
	if d.lieIsolated {
		st.IsolatedIDs++
	}
	return st, nil
}

// The device path from the input's own ids: text (narrowed, or 64-bit
// ids as they are) and 32-bit binary files (as read), --verify against the
// host (which catches a wrong count of ids seen only in loops), and the
// fallbacks when the ids or even the compacted pairs do not fit.
func TestCountFileIDDevicePath(t *testing.T) {
	ctx := context.Background()
	text, want := writeEdges(t)
	edges, _, err := edgeio.ReadFile(ctx, text, edgeio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "g.bin")
	if err := edgeio.WriteFile(bin, edges, edgeio.WriteOptions{IDWidth: 4}); err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(t.TempDir(), "wide.txt")
	for i := range edges {
		edges[i].U += 1 << 40
		edges[i].V += 1 << 40
	}
	if err := edgeio.WriteFile(wide, edges, edgeio.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                         string
		idTooSmall, tooSmall, lie    bool
		verify                       bool
		wantErr                      string
		wantIDPrepared, wantPrepared int
	}{
		{"ids", false, false, false, false, "", 1, 0},
		{"ids, verified", false, false, false, true, "", 1, 0},
		{"ids, lying about isolated ids", false, false, true, true, "only in self-loops", 1, 0},
		{"ids do not fit", true, false, false, false, "", 0, 1},
		{"ids do not fit, verified", true, false, false, true, "", 0, 1},
		{"nothing fits", true, true, false, false, "", 0, 0},
	} {
		for _, file := range []string{text, bin, wide} {
			t.Run(tc.name+" "+filepath.Base(file), func(t *testing.T) {
				cpu, err := kernels.NewCPU("merge", kernels.CPUOptions{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				dev := &fakeIDDevice{fakeDevice: fakeDevice{Counter: cpu, tooSmall: tc.tooSmall}, idTooSmall: tc.idTooSmall, lieIsolated: tc.lie}
				cfg := testConfig([]worker.Slot{{Device: api.Device{Kind: "gpu", Name: "fake"}, NewCounter: func(string) (kernels.Counter, error) { return dev, nil }}})
				cfg.Verify = tc.verify
				rep, err := CountFile(ctx, file, cfg)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("got %v, want an error about %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if rep.Triangles != want || dev.idPrepared != tc.wantIDPrepared || dev.prepared != tc.wantPrepared || rep.Verified != tc.verify {
					t.Fatalf("%d triangles (want %d), prepared from ids %d times (want %d), compacted %d (want %d), verified %v",
						rep.Triangles, want, dev.idPrepared, tc.wantIDPrepared, dev.prepared, tc.wantPrepared, rep.Verified)
				}
				wantWidth := 4
				if file == wide {
					wantWidth = 8
				}
				if dev.idPrepared > 0 && dev.widths[0] != wantWidth {
					t.Fatalf("ids went to the device %d bytes wide, want %d", dev.widths[0], wantWidth)
				}
				host, err := CountFile(ctx, file, testConfig(cpuSlots(1, "merge")))
				if err != nil {
					t.Fatal(err)
				}
				if rep.Vertices != host.Vertices || rep.Edges != host.Edges || rep.Wedges != host.Wedges || *rep.Removed != *host.Removed {
					t.Fatalf("figures %d vertices, %d edges, %d wedges, removed %+v; the host path's %d, %d, %d, %+v",
						rep.Vertices, rep.Edges, rep.Wedges, *rep.Removed, host.Vertices, host.Edges, host.Wedges, *host.Removed)
				}
			})
		}
	}
}

// Config.Devices runs while the file is read: its slots count, the
// count's wait for it after the read is reported, and its error stops the
// count (and wins over a read error).
func TestCountFileDeferredDevices(t *testing.T) {
	ctx := context.Background()
	path, want := writeEdges(t)
	cfg := testConfig(nil)
	// The device takes 600 ms to start; reading this small file takes a
	// few, so the count waits well over 200 ms for it even when the read
	// is slowed 100-fold on a loaded machine.
	cfg.Devices = func() ([]worker.Slot, string, error) {
		time.Sleep(600 * time.Millisecond)
		return cpuSlots(1, "hash"), "slow cpu", nil
	}
	rep, err := CountFile(ctx, path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Triangles != want || rep.Device != "slow cpu" || rep.Seconds.DeviceWait < 0.2 || rep.Seconds.DeviceWait > rep.Seconds.Total {
		t.Fatalf("%d triangles (want %d) on %q, device wait %.3f s of %.3f s", rep.Triangles, want, rep.Device, rep.Seconds.DeviceWait, rep.Seconds.Total)
	}
	errNoGPU := errors.New("no GPU here")
	cfg.Devices = func() ([]worker.Slot, string, error) { return nil, "", errNoGPU }
	for _, p := range []string{path, filepath.Join(t.TempDir(), "missing.txt")} {
		if _, err := CountFile(ctx, p, cfg); !errors.Is(err, errNoGPU) {
			t.Fatalf("%s: %v, want the device's error", p, err)
		}
	}
	cfg.Devices = func() ([]worker.Slot, string, error) { return nil, "", nil }
	if _, err := CountFile(ctx, path, cfg); err == nil || !strings.Contains(err.Error(), "no counting slots") {
		t.Fatalf("no slots: %v", err)
	}
	if _, err := CountFilePartitioned(ctx, path, cfg); err == nil {
		t.Fatal("a partitioned count took Devices in place of Slots")
	}
}

// TestModelFromDevice: with ModelFromDevice the memory model of P = 0 is
// the started device's: the GPU's accounting for GPU slots, the host's for
// CPU ones.
func TestModelFromDevice(t *testing.T) {
	lib := deviceLibrary(t)
	gslots, _ := deviceSlots(t, lib, 1, 0, false)
	for _, tc := range []struct {
		slots []worker.Slot
		want  partition.MemModel
	}{{gslots, GPUMemModel()}, {cpuSlots(1, "merge"), partition.HostModel()}} {
		slots := tc.slots
		cfg := Config{Logger: slog.New(slog.DiscardHandler), ModelFromDevice: true,
			Devices: func() ([]worker.Slot, string, error) { return slots, slots[0].Device.Name, nil }}
		counter, err := startCounter(context.Background(), &cfg).wait(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		closeCounter(counter, cfg.Logger)
		m, w := cfg.Model, tc.want
		same := m.RowSplit == w.RowSplit && m.ScratchFixed == w.ScratchFixed && m.ScratchPerEdge == w.ScratchPerEdge &&
			(m.BlockBytes == nil) == (w.BlockBytes == nil) && (m.BlockBytes == nil || m.BlockBytes(1000, 9000) == w.BlockBytes(1000, 9000))
		if !same {
			t.Fatalf("%s slots: model %+v, want %+v", slots[0].Device.Kind, m, w)
		}
	}
}
