package coordinator

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/partition"
	"github.com/trigrid/trigrid/storage"
)

// BlockSource hands out decoded blocks B[i][j]. Implementations must be
// safe for concurrent use; the returned CSR is shared and read-only.
type BlockSource interface {
	Block(ctx context.Context, i, j int) (*graph.CSR, error)
}

// LocalConfig configures RunLocal.
type LocalConfig struct {
	// Workers is the number of subtasks counted at once, each by its own
	// Counter. The CPU kernels are parallel themselves, so on a machine
	// with few cores one subtask at a time with a parallel kernel keeps the
	// cores busy with less cache pressure; 0 means 1. Measured on 2 cores
	// (BenchmarkRunLocalWorkers, rmat scale 20 edge factor 16, P = 4,
	// kernel "auto", through shards, quiet machine, medians of 3, spread
	// under 5%; the whole graph counts in 1.02 s): seconds for one subtask
	// with a 2-goroutine kernel / 2 subtasks with serial kernels / 2 with
	// 2-goroutine kernels / 4 with serial kernels: hash 1.90 / 1.89 / 1.87
	// / 1.90, range 1.04 / 1.10 / 1.10 / 1.12. Hash is a tie within 2%,
	// range 5% faster one at a time, so one at a time stays the default.
	// (In memory, without decoding, hash was 2.00 / 1.78 and range 1.00 /
	// 1.02 for the first two.) These figures predate the clip
	// (kernels.Subtask.Clip); with it and the spans in column order, one
	// at a time counts rmat 20's hash shards in 1.63 s and its folded
	// range shards in 1.40 s against 1.11 s for the whole graph, and
	// rmat 22's in 8.39 and 7.44 s against 7.59 s (docs/benchmarks.md,
	// 2026-11-21).
	Workers int
	// NewCounter makes one Counter per worker.
	NewCounter func() (kernels.Counter, error)
	// CacheBytes bounds the decoded blocks kept between subtasks (raw CSR
	// bytes). Blocks in use are held by their subtasks regardless; the
	// bound only decides what stays for later ones. 0 means
	// DefaultCacheBytes; negative disables caching.
	CacheBytes int64
	// Progress, if set, is called after each subtask with the number done;
	// calls are serialised.
	Progress func(done, total int)
	Logger   *slog.Logger
}

// prefetchAhead is how many subtasks per worker the prefetcher may load
// blocks for ahead of the workers (a variable so benchmarks can turn it
// off with 0).
var prefetchAhead = 2

// DefaultCacheBytes keeps a few blocks of a graph of some 100M edges.
const DefaultCacheBytes = 1 << 30

// SubtaskResult is the outcome of one subtask.
type SubtaskResult struct {
	I, J, K    int
	Triangles  uint64
	KernelTime time.Duration
	// Edges is the number of base edges, Work the estimate it was
	// scheduled by (partition.Subtask).
	Edges int64
	Work  int64
}

// LocalResult is the outcome of RunLocal.
type LocalResult struct {
	// Triangles is the sum over Subtasks, each counted once.
	Triangles uint64
	// Subtasks is in the order of the tasks given.
	Subtasks []SubtaskResult
	Wall     time.Duration
}

// SubtaskError is the error of a failed subtask.
type SubtaskError struct {
	I, J, K int
	Err     error
}

func (e *SubtaskError) Error() string {
	return fmt.Sprintf("coordinator: subtask (%d,%d,%d): %v", e.I, e.J, e.K, e.Err)
}

func (e *SubtaskError) Unwrap() error { return e.Err }

// RunLocal counts tasks on cfg.Workers goroutines in this process. Workers
// take the next subtask in list order, which keeps (I, J) fixed across K
// (partition.Enumerate's order), so neighbouring subtasks share cached
// blocks. Every task index is claimed by exactly one worker, so each count
// enters the sum once. The first error cancels the other workers and is
// returned as a *SubtaskError.
func RunLocal(ctx context.Context, src BlockSource, tasks []partition.Subtask, cfg LocalConfig) (*LocalResult, error) {
	if cfg.NewCounter == nil {
		return nil, errors.New("coordinator: LocalConfig.NewCounter is nil")
	}
	if src == nil {
		return nil, errors.New("coordinator: RunLocal: nil block source")
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 1
	}
	workers = min(workers, max(len(tasks), 1))
	cacheBytes := cfg.CacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "local-runner")

	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cache := newBlockCache(src, cacheBytes)
	res := &LocalResult{Subtasks: make([]SubtaskResult, len(tasks))}

	var (
		mu       sync.Mutex
		next     int
		done     int
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	var wg sync.WaitGroup
	// Decoding a shard is serial; the prefetcher loads the blocks of the
	// next few subtasks while the kernel counts the current one, so
	// decoding overlaps counting instead of leaving cores idle between
	// subtasks (rmat scale 20, P = 4 through shards, one subtask at a
	// time, medians of 3: hash 1.96 -> 1.90 s, range 1.14 -> 1.04 s). It
	// stays at most prefetchAhead subtasks per worker in front of the
	// workers so that what it loads is still cached when used.
	taken := make(chan struct{}, 1)
	if cacheBytes >= 0 && len(tasks) > 1 && prefetchAhead > 0 {
		ahead := prefetchAhead * workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range tasks {
				claimed := false
				for {
					mu.Lock()
					n := next
					mu.Unlock()
					claimed = k < n // a worker has it: loading now gains nothing
					if k < n+ahead || ctx.Err() != nil {
						break
					}
					select {
					case <-taken:
					case <-ctx.Done():
					}
				}
				if ctx.Err() != nil {
					return
				}
				if claimed {
					continue
				}
				t := tasks[k]
				for _, ij := range [3][2]int{{t.I, t.J}, {t.I, t.K}, {t.J, t.K}} {
					// A failed load is not cached; the worker that needs
					// the block loads it again and reports the error.
					cache.get(ctx, ij[0], ij[1])
				}
			}
		}()
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counter, err := cfg.NewCounter()
			if err != nil {
				fail(fmt.Errorf("coordinator: local worker %d: new counter: %w", w, err))
				return
			}
			if c, ok := counter.(interface{ Close() error }); ok {
				defer c.Close()
			}
			for ctx.Err() == nil {
				mu.Lock()
				x := next
				next++
				mu.Unlock()
				select {
				case taken <- struct{}{}:
				default:
				}
				if x >= len(tasks) {
					return
				}
				t := tasks[x]
				r, err := runOne(ctx, cache, counter, t)
				if err != nil {
					fail(&SubtaskError{I: t.I, J: t.J, K: t.K, Err: err})
					return
				}
				res.Subtasks[x] = r
				mu.Lock()
				done++
				d := done
				if cfg.Progress != nil {
					cfg.Progress(d, len(tasks))
				}
				mu.Unlock()
				log.Debug("subtask done", "i", t.I, "j", t.J, "k", t.K, "triangles", r.Triangles, "kernel", r.KernelTime)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("coordinator: local run: %w", err)
	}
	for _, r := range res.Subtasks {
		res.Triangles += r.Triangles
	}
	res.Wall = time.Since(start)
	return res, nil
}

func runOne(ctx context.Context, cache *blockCache, c kernels.Counter, t partition.Subtask) (SubtaskResult, error) {
	var blocks [3]*graph.CSR
	for n, ij := range [3][2]int{{t.I, t.J}, {t.I, t.K}, {t.J, t.K}} {
		b, err := cache.get(ctx, ij[0], ij[1])
		if err != nil {
			return SubtaskResult{}, fmt.Errorf("block (%d,%d): %w", ij[0], ij[1], err)
		}
		blocks[n] = b
	}
	// The clip (partition.TailOffset) lets the CPU kernels skip the part
	// of a list in B[I][K] that cannot be above v, which gives hashcol its
	// tail path on every subtask (rmat scale 20, P = 4 by hash, 2 cores:
	// 2.4 s with auto before, 1.7 s after, 1.6 s with the spans in column
	// order; the whole graph 1.0 to 1.1 s).
	r, err := c.Count(ctx, kernels.Subtask{IJ: blocks[0], IK: blocks[1], JK: blocks[2], Clip: t.Clip, TailOffset: t.TailOffset})
	if err != nil {
		return SubtaskResult{}, fmt.Errorf("kernel %s: %w", c.Name(), err)
	}
	return SubtaskResult{I: t.I, J: t.J, K: t.K, Triangles: r.Triangles, KernelTime: r.KernelTime, Edges: t.Edges, Work: t.Work}, nil
}

// blockCache is a shared LRU of decoded blocks keyed by (i, j) and bounded
// by raw CSR bytes. Concurrent misses on one block share a single load.
type blockCache struct {
	src   BlockSource
	limit int64

	mu      sync.Mutex
	entries map[[2]int]*cacheEntry
	lru     *list.List // front = most recent; values are [2]int keys
	bytes   int64
}

type cacheEntry struct {
	ready chan struct{} // closed once b/err are set
	b     *graph.CSR
	err   error
	size  int64
	elem  *list.Element // nil while loading or when not retained
}

func newBlockCache(src BlockSource, limit int64) *blockCache {
	return &blockCache{src: src, limit: limit, entries: map[[2]int]*cacheEntry{}, lru: list.New()}
}

func csrBytes(b *graph.CSR) int64 { return 8*int64(len(b.Offsets)) + 4*int64(len(b.Cols)) }

func (c *blockCache) get(ctx context.Context, i, j int) (*graph.CSR, error) {
	key := [2]int{i, j}
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		if e.elem != nil {
			c.lru.MoveToFront(e.elem)
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
			return e.b, e.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e := &cacheEntry{ready: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	b, err := c.src.Block(ctx, i, j)
	c.mu.Lock()
	e.b, e.err = b, err
	close(e.ready)
	if err != nil || c.limit < 0 {
		// Failed loads are not remembered (a retry may succeed), and with
		// caching off nothing is.
		delete(c.entries, key)
	} else {
		e.size = csrBytes(b)
		e.elem = c.lru.PushFront(key)
		c.bytes += e.size
		c.evict(key)
	}
	c.mu.Unlock()
	return b, err
}

// evict drops least recently used blocks until the cache fits, keeping
// keep (the block just loaded) even if it alone is over the limit.
func (c *blockCache) evict(keep [2]int) {
	for c.bytes > c.limit {
		back := c.lru.Back()
		if back == nil {
			return
		}
		key := back.Value.([2]int)
		if key == keep {
			return
		}
		e := c.entries[key]
		c.lru.Remove(back)
		delete(c.entries, key)
		c.bytes -= e.size
	}
}

// PartitionSource serves blocks of an in-memory partition.
type PartitionSource struct{ Part *partition.Partition }

// Block returns B[i][j].
func (s PartitionSource) Block(ctx context.Context, i, j int) (*graph.CSR, error) {
	p := s.Part.P()
	if i < 0 || j < 0 || i >= p || j >= p {
		return nil, fmt.Errorf("coordinator: block (%d,%d) outside a %dx%d partition", i, j, p, p)
	}
	return s.Part.Block(i, j), nil
}

// StoreSource serves blocks of a stored partitioning, decoded and checked
// against the manifest by storage.LoadShard (whose errors name the shard).
type StoreSource struct {
	Store    storage.Store
	Manifest *storage.Manifest
}

// Block loads and decodes B[i][j].
func (s StoreSource) Block(ctx context.Context, i, j int) (*graph.CSR, error) {
	return storage.LoadShard(ctx, s.Store, s.Manifest, i, j)
}
