package pipeline

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/kernels/gpu"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
	"github.com/trigrid/trigrid/worker"
)

// A count of shards whose device is chosen by the count (cfg.Devices, a
// device of the reference library) decodes the first blocks while the
// device starts, counts exactly, and reports where its count phase went:
// every block loaded once (before or during the count), the device's
// uploads and kernels, and a busy share within the phase.
func TestCountShardsChoosesTheDeviceWhileLoading(t *testing.T) {
	lib := deviceLibrary(t)
	fwd := testForward(t, 11, 4)
	want := wholeCount(t, fwd)
	ctx := context.Background()
	st := storage.NewMemStore()
	if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
		partition.Config{Scheme: storage.SchemeHash, P: 4, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := storage.ReadManifest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	cfg := testConfig(nil)
	cfg.Devices = func() ([]worker.Slot, string, error) {
		asked++
		sel, err := gpu.Select("gpu", "auto", gpu.SelectOptions{Library: gpu.Options{Path: lib}})
		if err != nil {
			return nil, "", err
		}
		return SlotsOf(sel), sel.Device, nil
	}
	rep, err := CountShards(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Triangles != want || asked != 1 {
		t.Fatalf("counted %d (want %d), the devices chosen %d times", rep.Triangles, want, asked)
	}
	e := rep.Engine
	if e == nil || len(e.Devices) != 1 || e.Devices[0].Kind != "gpu" || e.Devices[0].Subtasks != len(rep.Partition.Subtasks) {
		t.Fatalf("engine report %+v: want one GPU that counted all %d subtasks", e, len(rep.Partition.Subtasks))
	}
	if e.Loads != len(m.Shards) {
		t.Errorf("%d block loads of %d shards, want each once", e.Loads, len(m.Shards))
	}
	if math.Abs(e.Seconds.Busy-e.Seconds.Upload-e.Seconds.Kernel) > 1e-9 || e.BusyShare <= 0 || e.BusyShare > 1 || e.KernelShare > e.BusyShare {
		t.Errorf("engine seconds %+v, busy share %v, kernel share %v", e.Seconds, e.BusyShare, e.KernelShare)
	}
	if rep.Device == "" || rep.Seconds.DeviceWait < 0 || rep.Seconds.Count <= 0 || rep.Seconds.Total < rep.Seconds.Count {
		t.Errorf("device %q, seconds %+v", rep.Device, rep.Seconds)
	}
}

// A device that cannot be had fails the count with its reason, the blocks
// loading meanwhile stopped.
func TestCountShardsDeviceError(t *testing.T) {
	fwd := testForward(t, 9, 2)
	ctx := context.Background()
	st := storage.NewMemStore()
	if _, err := partition.PartitionGraph(ctx, fwd, storage.GraphStats{Vertices: fwd.NumRows(), Edges: fwd.NumEdges()}, st,
		partition.Config{Scheme: storage.SchemeHash, P: 3, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(nil)
	cfg.Devices = func() ([]worker.Slot, string, error) { return nil, "", errors.New("no GPU here") }
	if _, err := CountShards(ctx, st, cfg); err == nil || !strings.Contains(err.Error(), "no GPU here") {
		t.Fatalf("CountShards = %v, want the device's error", err)
	}
}
