package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// PartitionFile partitions a graph file ("-" is standard input) into
// store. With pc.MemLimit = 0 the graph goes through Load (read -> clean
// -> orient by degree, the pipeline every command shares) and is split in
// memory; with a limit the external-memory partitioner streams it, which
// writes byte-identical shards for the same partition id. cfg says how the
// file is read; its Order must be degree. pc.P = 0 chooses the smallest P
// whose largest subtask fits cfg.Budget under cfg.Model, from the loaded
// graph; it needs a positive Budget and no MemLimit.
//
// pc.MemLimit bounds this process's resident memory (`trigrid partition
// --mem-limit`): what the process holds when the call begins, and every
// page of the files it maps (the binary: how many of them are resident
// depends on the page cache, and can grow during the run), is set aside,
// the partitioner gets the rest, and the Go runtime's soft memory limit is
// lowered for the call to the limit less those files, so that the
// collector keeps the heap where the partitioner planned it. A limit below
// the least that works is an error naming --mem-limit and that least.
func PartitionFile(ctx context.Context, path string, store storage.Store, cfg Config, pc partition.Config) (*partition.Summary, error) {
	cfg.fill()
	if pc.P == 0 && (pc.MemLimit > 0 || cfg.Budget <= 0) {
		return nil, fmt.Errorf("%s: choosing P needs a memory budget and the in-memory partitioner", path)
	}
	if pc.MemLimit > 0 {
		ro := cfg.Read
		ro.Progress = nil
		limit := pc.MemLimit
		// Freed memory goes back first, so that what the process holds
		// is what it uses.
		debug.FreeOSMemory()
		resident, files := processMemory()
		mapped := max(files, mappedFiles())
		held := resident - files + mapped + runtimeMargin
		pc.MemLimit = max(limit-held, 1)
		// The collector runs late on a loaded machine, and garbage made
		// meanwhile is resident too: the soft limit leaves it
		// 1/partition.GCShare of the partitioner's part, which the
		// partitioner plans around.
		soft := limit - mapped - runtimeMargin - pc.MemLimit/partition.GCShare
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(max(soft, 1<<20)))
		sum, err := partition.PartitionFile(ctx, path, ro, store, pc)
		var me *partition.MemLimitError
		if errors.As(err, &me) {
			least := me.Least + (held+1<<20-1)&^(1<<20-1)
			if me.Input == "" {
				return nil, fmt.Errorf("--mem-limit %s is below the least the partitioner works in (%d MiB for P=%d on %s)",
					sizeText(limit), least>>20, me.P, me.On())
			}
			return nil, fmt.Errorf("--mem-limit %s is below the least that partitions %s: %d MiB (for %s, P=%d on %s)",
				sizeText(limit), path, least>>20, me.Input, me.P, me.On())
		}
		return sum, err
	}
	start := time.Now()
	cfg.Order = graph.OrderDegree
	var rep Report
	fwd, ids, err := Load(ctx, path, cfg, &rep, true)
	if err != nil {
		return nil, err
	}
	rm, in := rep.Removed, rep.Input
	stats := storage.GraphStats{Vertices: rep.Vertices, Edges: rep.Edges, Wedges: rep.Wedges,
		MaxDegree: rep.MaxDegree, Order: rep.Order, Source: path, MaxOutDegree: rep.MaxOutDegree,
		Removed: &storage.RemovedStats{SelfLoops: rm.SelfLoops, Duplicates: rm.Duplicates, IsolatedIDs: rm.IsolatedIDs, BadLines: rm.BadLines},
		Input:   &storage.InputStats{Format: in.Format, Compression: in.Compression, Bytes: in.Bytes, RawEdges: in.RawEdges}}
	if pc.P == 0 {
		if pc.P, err = partition.ChoosePForGraph(fwd, pc.Scheme, cfg.Budget, cfg.Model, cfg.Workers); err != nil {
			return nil, fmt.Errorf("%s: choosing P for %d bytes: %w", path, cfg.Budget, err)
		}
		cfg.Logger.Info("chose P", "p", pc.P, "budget", cfg.Budget)
	}
	clean := graph.CleanStats{InputEdges: uint64(in.RawEdges), Vertices: rep.Vertices, Edges: rep.Edges, SelfLoops: rm.SelfLoops,
		Duplicates: rm.Duplicates, IsolatedIDs: rm.IsolatedIDs}
	return partition.PartitionLoaded(ctx, fwd, ids, stats, clean, start, store, pc)
}

// runtimeMargin is room for what the Go runtime itself adds during a run
// (stacks of new threads, its own structures), beside the partitioner's
// memory.
const runtimeMargin = 2 << 20

// mappedFiles is the size of every file this process maps (the binary's
// segments), from /proc/self/maps: the most its file-backed resident pages
// can reach. 0 where that cannot be read.
func mappedFiles() int64 {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode pathname
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], "/") || fields[4] == "0" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil && b > a {
			n += int64(b - a)
		}
	}
	return n
}

// processMemory is this process's resident memory and the part of it that
// maps files (the binary), from /proc/self/status; where that cannot be
// read, the Go runtime's memory and a guess of 32 MiB for the binary.
func processMemory() (resident, files int64) {
	if f, err := os.Open("/proc/self/status"); err == nil {
		defer f.Close()
		var rss, file, shmem int64
		found := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			fields := strings.Fields(v)
			if len(fields) == 0 {
				continue
			}
			n, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "VmRSS":
				rss, found = n<<10, found+1
			case "RssFile":
				file, found = n<<10, found+1
			case "RssShmem":
				shmem = n << 10
			}
		}
		if found == 2 {
			return rss, file + shmem
		}
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	const guess = 32 << 20
	return int64(s[0].Value.Uint64()-s[1].Value.Uint64()) + guess, guess
}

// sizeText writes a size as flags take it: whole GiB, MiB or KiB with
// their unit, else bytes.
func sizeText(n int64) string {
	for _, u := range []struct {
		unit  string
		bytes int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.bytes && n%u.bytes == 0 {
			return fmt.Sprintf("%d%s", n/u.bytes, u.unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
