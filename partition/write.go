package partition

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// Config configures partitioning.
type Config struct {
	Scheme storage.Scheme
	// P is the number of vertex groups (P x P blocks, P^3 subtasks).
	P int
	// Workers bounds the goroutines of every parallel stage; 0 means
	// GOMAXPROCS.
	Workers int
	// MemLimit, when > 0, selects the external-memory partitioner for
	// PartitionFile and bounds the memory it holds (bytes); the caller
	// should set the runtime's soft memory limit (debug.SetMemoryLimit)
	// to it for the run, or lower by at most MemLimit/GCShare. 0 reads
	// the whole graph into memory.
	MemLimit int64
	// WorkMem sizes the external partitioner's spill buffers and buckets
	// (bytes), within MemLimit: larger buffers than that cost page faults
	// and cache misses without saving passes, so a large MemLimit only
	// raises the ceiling for the per-vertex arrays. 0 means
	// min(MemLimit, DefaultWorkMem).
	WorkMem int64
	// TempDir holds the external partitioner's run files ("" = os.TempDir).
	TempDir string
	// PartitionID is written into every shard and the manifest; 0 draws a
	// random one (crypto/rand) so two runs can never be mixed. Tests fix it
	// to compare bytes.
	PartitionID uint64
	// Progress, if set, reports each stage as it advances. Calls are
	// serialised, so the callback needs no locking of its own.
	Progress func(stage string, done, total int64)
	Logger   *slog.Logger

	// progressMu serialises Progress calls from parallel stages; check
	// sets it, and copies of the Config share it.
	progressMu *sync.Mutex
}

// DefaultWorkMem is the external partitioner's default buffer memory
// (Config.WorkMem): the size that partitions fastest on the machines
// measured in docs/decisions/2026-11-23-partitioner-work-memory.md.
const DefaultWorkMem = 256 << 20

func (c *Config) check() error {
	if !c.Scheme.Valid() {
		return fmt.Errorf("partition: invalid scheme %v", c.Scheme)
	}
	if c.P < 1 || c.P > maxP {
		return fmt.Errorf("partition: P = %d out of range 1..%d", c.P, maxP)
	}
	if c.MemLimit < 0 {
		return fmt.Errorf("partition: negative memory limit %d", c.MemLimit)
	}
	if c.WorkMem < 0 {
		return fmt.Errorf("partition: negative work memory %d", c.WorkMem)
	}
	if c.WorkMem == 0 || c.WorkMem > c.MemLimit {
		c.WorkMem = min(c.MemLimit, DefaultWorkMem)
	}
	c.Workers = clampWorkers(c.Workers)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.progressMu == nil {
		c.progressMu = new(sync.Mutex)
	}
	if c.PartitionID == 0 {
		var b [8]byte
		for c.PartitionID == 0 {
			if _, err := rand.Read(b[:]); err != nil {
				return fmt.Errorf("partition: partition id: %w", err)
			}
			c.PartitionID = binary.LittleEndian.Uint64(b[:])
		}
	}
	return nil
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func (c *Config) progress(stage string, done, total int64) {
	if c.Progress == nil {
		return
	}
	if c.progressMu != nil {
		c.progressMu.Lock()
		defer c.progressMu.Unlock()
	}
	c.Progress(stage, done, total)
}

// Summary reports a partitioning run.
type Summary struct {
	Scheme storage.Scheme
	P      int
	// Fold is the number of ranges per group of the range scheme (0 for
	// hash).
	Fold        int
	PartitionID uint64
	Graph       storage.GraphStats
	// Clean says what cleaning removed (PartitionFile only).
	Clean *graph.CleanStats `json:",omitempty"`
	// Blocks is the number of shards written (non-empty blocks).
	Blocks int
	// Bytes is the total shard size; RawBytes what the same blocks take as
	// plain CSR (8-byte offsets, 4-byte columns); Ratio = Bytes/RawBytes.
	Bytes, RawBytes int64
	Ratio           float64
	Balance         Balance
	// External is true when the external-memory path ran.
	External bool
	// Seconds is the wall time from start (reading, for PartitionFile) to
	// the manifest; EdgesPerSec is the forward edges over it.
	Seconds     float64
	EdgesPerSec float64
	// Stages holds per-stage wall seconds in the order they ran.
	Stages []Stage
}

// Stage is the wall time of one step.
type Stage struct {
	Name    string
	Seconds float64
}

type stageClock struct {
	start, last time.Time
	stages      []Stage
}

func newClock() *stageClock { t := time.Now(); return &stageClock{start: t, last: t} }

func (c *stageClock) mark(name string) {
	now := time.Now()
	c.stages = append(c.stages, Stage{name, now.Sub(c.last).Seconds()})
	c.last = now
}

// IDMapName is the id map's file name in a store.
const IDMapName = "idmap.bin"

// rawCSRBytes is the plain in-memory size of a block.
func rawCSRBytes(rows, edges int64) int64 { return 8*(rows+1) + 4*edges }

// writeBlocks encodes and stores every non-empty block of l, building each
// with build(i, j) (which may be called concurrently), then returns the
// manifest's shard list in (i, j) order. The manifest is the caller's to
// write, after this returns.
//
// Each of the workers holds one block and its encoded shard at a time, so
// memory stays at workers blocks beyond the input. Blocks go largest first
// (size(i, j) estimates edges; nil keeps (i, j) order) so that a big block
// taken last does not leave the other workers idle: blocks of small or
// clustered graphs can differ in size by tens of percent. The id map, when there is one, is encoded and
// stored alongside the blocks rather than after them.
func writeBlocks(ctx context.Context, l *Layout, id uint64, store storage.Store, workers int,
	cfg *Config, build func(i, j int) (*graph.CSR, error), size func(i, j int) int64) ([]storage.ShardInfo, int64, error) {
	p := l.P
	var (
		mu     sync.Mutex
		shards []storage.ShardInfo
		raw    int64
		done   int64
		first  error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	order := make([]int, 0, p*p)
	for x := range p * p {
		if l.CanHaveEdges(x/p, x%p) {
			order = append(order, x)
		}
	}
	skipped := int64(p*p - len(order))
	if size != nil {
		sizes := make([]int64, p*p)
		for _, x := range order {
			sizes[x] = size(x/p, x%p)
		}
		sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })
	}
	done = skipped
	perr := parallelFor(ctx, len(order), workers, func(k int) {
		i, j := order[k]/p, order[k]%p
		info, rb, err := writeBlock(ctx, l, id, store, i, j, build)
		mu.Lock()
		defer mu.Unlock()
		done++
		if err != nil {
			if first == nil {
				first = err
			}
			cancel()
			return
		}
		if info != nil {
			shards = append(shards, *info)
			raw += rb
		}
		cfg.progress("write", done, int64(p*p))
	})
	if first != nil {
		return nil, 0, first
	}
	if perr != nil {
		return nil, 0, perr
	}
	sort.Slice(shards, func(a, b int) bool {
		if shards[a].I != shards[b].I {
			return shards[a].I < shards[b].I
		}
		return shards[a].J < shards[b].J
	})
	return shards, raw, nil
}

// idMapWriter stores the id map on its own goroutine while the blocks are
// written; wait returns its reference (nil without ids).
type idMapWriter struct {
	done chan struct{}
	ref  *storage.FileRef
	err  error
}

func startIDMap(ctx context.Context, store storage.Store, ids []uint64) *idMapWriter {
	w := &idMapWriter{done: make(chan struct{})}
	if ids == nil {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		ref, err := storage.WriteIDMap(ctx, store, IDMapName, ids)
		if err != nil {
			w.err = fmt.Errorf("partition: id map: %w", err)
			return
		}
		w.ref = &ref
	}()
	return w
}

func (w *idMapWriter) wait() (*storage.FileRef, error) {
	<-w.done
	return w.ref, w.err
}

func writeBlock(ctx context.Context, l *Layout, id uint64, store storage.Store, i, j int,
	build func(i, j int) (*graph.CSR, error)) (*storage.ShardInfo, int64, error) {
	b, err := build(i, j)
	if err != nil {
		return nil, 0, fmt.Errorf("partition: block (%d,%d): %w", i, j, err)
	}
	if b.NumEdges() == 0 {
		return nil, 0, nil // absent from the manifest = empty
	}
	h := storage.ShardHeader{
		Scheme: l.Scheme, P: uint32(l.P), I: uint32(i), J: uint32(j),
		Rows: uint64(b.NumRows()), Cols: uint64(b.NCols), Edges: uint64(b.NumEdges()),
		PartitionID: id,
	}
	data, err := storage.EncodeShard(h, b)
	if err != nil {
		return nil, 0, fmt.Errorf("partition: block (%d,%d): %w", i, j, err)
	}
	name := storage.ShardName(i, j)
	if err := store.Put(ctx, name, data); err != nil {
		return nil, 0, fmt.Errorf("partition: store %s in %s: %w", name, store.URL(), err)
	}
	info := &storage.ShardInfo{
		I: i, J: j, File: name, Bytes: int64(len(data)),
		Rows: h.Rows, Cols: h.Cols, Edges: h.Edges, XXHash64: xxhash.Sum64(data),
	}
	return info, rawCSRBytes(b.NumRows(), b.NumEdges()), nil
}

// finish writes the id map (if any) and the manifest, and fills the summary.
func finish(ctx context.Context, store storage.Store, l *Layout, cfg *Config, stats storage.GraphStats,
	idm *idMapWriter, shards []storage.ShardInfo, raw int64, clock *stageClock, sum *Summary) error {
	m := &storage.Manifest{
		Format:      storage.ManifestFormat,
		Scheme:      l.Scheme,
		P:           l.P,
		PartitionID: cfg.PartitionID,
		Graph:       stats,
		GroupSizes:  l.GroupSizes(),
		Shards:      shards,
		Created:     time.Now().UTC().Format(time.RFC3339),
	}
	if l.Scheme == storage.SchemeRange {
		m.Boundaries = append([]uint64(nil), l.Bounds...)
		if l.Fold > 1 {
			m.Fold = l.Fold
		}
	}
	ref, err := idm.wait()
	if err != nil {
		return err
	}
	m.IDMap = ref
	if err := storage.WriteManifest(ctx, store, m); err != nil {
		return fmt.Errorf("partition: manifest: %w", err)
	}
	clock.mark("write")
	sum.Scheme, sum.P, sum.Fold, sum.PartitionID, sum.Graph = l.Scheme, l.P, l.Fold, cfg.PartitionID, stats
	sum.Blocks = len(shards)
	for _, s := range shards {
		sum.Bytes += s.Bytes
	}
	sum.RawBytes = raw
	if raw > 0 {
		sum.Ratio = float64(sum.Bytes) / float64(raw)
	}
	sum.Balance = ManifestBalance(m)
	sum.Seconds = time.Since(clock.start).Seconds()
	if sum.Seconds > 0 {
		sum.EdgesPerSec = float64(stats.Edges) / sum.Seconds
	}
	sum.Stages = clock.stages
	return nil
}

// Subtasks lists the non-empty subtasks of a stored partitioning, in the
// order Enumerate gives, clipped for its layout (the manifest's scheme, P
// and fold are all the clip needs).
func Subtasks(m *storage.Manifest) []Subtask {
	tasks := Enumerate(m.P, manifestStat(m))
	SetClip(tasks, m.Scheme, m.P, manifestFold(m))
	return tasks
}

// ManifestBalance measures a stored partitioning from its manifest.
func ManifestBalance(m *storage.Manifest) Balance {
	fold := manifestFold(m)
	canHave := func(i, j int) bool { return canHaveEdges(m.Scheme, fold, i, j) }
	return ComputeBalance(m.P, canHave, manifestStat(m), Subtasks(m))
}

// manifestFold is the fold of m's layout: 0 for hash, as Layout has it.
func manifestFold(m *storage.Manifest) int {
	if m.Scheme != storage.SchemeRange {
		return 0
	}
	return m.RangeFold()
}

// ManifestLayout rebuilds the layout a stored partitioning was cut with.
func ManifestLayout(m *storage.Manifest) (*Layout, error) {
	if m.Scheme == storage.SchemeHash {
		return NewHashLayout(m.Graph.Vertices, m.P)
	}
	return NewFoldedLayout(m.Graph.Vertices, m.P, m.RangeFold(), m.Boundaries)
}

func manifestStat(m *storage.Manifest) func(i, j int) BlockStat {
	idx := make(map[[2]int]storage.ShardInfo, len(m.Shards))
	for _, s := range m.Shards {
		idx[[2]int{s.I, s.J}] = s
	}
	return func(i, j int) BlockStat {
		s, ok := idx[[2]int{i, j}]
		if !ok {
			var rows int64
			if i < len(m.GroupSizes) {
				rows = m.GroupSizes[i]
			}
			return BlockStat{Rows: rows}
		}
		return BlockStat{Rows: int64(s.Rows), Edges: int64(s.Edges)}
	}
}
