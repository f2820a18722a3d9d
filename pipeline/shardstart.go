package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/worker"
)

// startShardDevices chooses a count of shards' devices (cfg.Devices, a
// GPU's start taking a good part of a second) while the blocks of its
// first subtasks are fetched and decoded on the host's cores into the
// cache the local workers will read (worker.Blocks.Preload), and sets
// cfg's slots and device. Nothing is done without cfg.Devices. The
// returned stop ends the loads still running and waits for them; the
// count calls it when it is done.
func startShardDevices(ctx context.Context, cfg *Config, rep *Report, src worker.Source, tasks []partition.Subtask) (stop func(), err error) {
	if cfg.Devices == nil {
		return func() {}, nil
	}
	blocks := worker.NewBlocks(cfg.CacheBytes)
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	loaders := cfg.Loaders
	if loaders == 0 {
		loaders = cfg.Workers
	}
	go func() {
		defer close(done)
		if loaders > 0 {
			blocks.Preload(pctx, src, firstUse(reuseOrder(tasks)), loaders)
		}
	}()
	stop = func() {
		cancel()
		<-done
	}
	t := time.Now()
	slots, device, err := cfg.Devices()
	rep.Seconds.DeviceWait = since(t)
	cfg.Logger.Debug("device selected", "device", device, "seconds", rep.Seconds.DeviceWait, "err", err)
	if err == nil && len(slots) == 0 {
		err = errors.New("pipeline: config: no counting slots")
	}
	if err != nil {
		stop()
		return nil, err
	}
	cfg.Slots, cfg.Device, cfg.Devices = slots, device, nil
	blocks.Share(len(slots)) // one local worker a slot reads it
	cfg.blocks = blocks
	rep.Device = device
	return stop, nil
}

// firstUse lists the blocks tasks read, each once, in the order they are
// first read.
func firstUse(tasks []partition.Subtask) [][2]int {
	seen := map[[2]int]bool{}
	var out [][2]int
	for _, t := range tasks {
		for _, ij := range [3][2]int{{t.I, t.J}, {t.I, t.K}, {t.J, t.K}} {
			if !seen[ij] {
				seen[ij] = true
				out = append(out, ij)
			}
		}
	}
	return out
}
