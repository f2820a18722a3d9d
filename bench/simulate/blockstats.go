package simulate

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/storage"
)

// BlockStatsKind and BlockStatsFormat name and version the block
// statistics file (`trigrid bench stats`).
const (
	BlockStatsKind   = "trigrid-block-stats"
	BlockStatsFormat = 1
)

// DefaultFineP is the fine P of `bench stats`: 240 has 20 divisors (1, 2,
// 3, 4, 5, 6, 8, 10, 12, 15, 16, 20, 24, 30, 40, 48, 60, 80, 120, 240),
// and its 57,600 block counts make a file of well under a megabyte.
const DefaultFineP = 240

// BlockStats is a graph's hash-partition block histogram at a fine P:
// the forward edge count of every block (a, b) with a = u mod FineP and
// b = v mod FineP for the forward edges u -> v (ids in degree order, as
// partition writes them). Because (x mod FineP) mod P = x mod P when P
// divides FineP, it gives the exact block sizes of the hash partition at
// every such P (Aggregate) without the shards, so the simulator can
// choose P for a graph never partitioned.
type BlockStats struct {
	Kind   string `json:"kind"`
	Format int    `json:"format"`
	// Source names the graph, for people.
	Source   string `json:"source"`
	Vertices int64  `json:"vertices"`
	Edges    int64  `json:"edges"`
	FineP    int    `json:"fine_p"`
	// BlockEdges has FineP*FineP entries, row-major.
	BlockEdges []int64 `json:"block_edges"`
}

// ComputeBlockStats counts fwd's edges per fine block on workers
// goroutines (0: all cores).
func ComputeBlockStats(fwd *graph.CSR, fineP, workers int, source string) (*BlockStats, error) {
	if fineP < 1 || fineP > 4096 {
		return nil, fmt.Errorf("simulate: fine P %d: want 1 to 4096", fineP)
	}
	n := fwd.NumRows()
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const chunk = 1 << 14
	total := make([]int64, fineP*fineP)
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			h := make([]int64, fineP*fineP)
			for {
				lo := next.Add(chunk) - chunk
				if lo >= n {
					break
				}
				for u := lo; u < min(lo+chunk, n); u++ {
					row := int(u%int64(fineP)) * fineP
					for _, v := range fwd.Row(u) {
						h[row+int(v%uint32(fineP))]++
					}
				}
			}
			mu.Lock()
			for i, c := range h {
				total[i] += c
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return &BlockStats{Kind: BlockStatsKind, Format: BlockStatsFormat, Source: source, Vertices: n,
		Edges: fwd.NumEdges(), FineP: fineP, BlockEdges: total}, nil
}

// Divisors are the P the statistics aggregate to, ascending.
func (b *BlockStats) Divisors() []int {
	var out []int
	for p := 1; p <= b.FineP; p++ {
		if b.FineP%p == 0 {
			out = append(out, p)
		}
	}
	return out
}

// Aggregate is the hash partition's grid at P, which must divide FineP.
func (b *BlockStats) Aggregate(p int) (*Grid, error) {
	if p < 1 || b.FineP%p != 0 {
		return nil, fmt.Errorf("simulate: P = %d does not divide the statistics' fine P %d (try one of %v)", p, b.FineP, b.Divisors())
	}
	if int64(p) > max(b.Vertices, 1) {
		return nil, fmt.Errorf("simulate: P = %d exceeds the graph's %d vertices", p, b.Vertices)
	}
	blocks := make([]int64, p*p)
	for a := range b.FineP {
		for c := range b.FineP {
			blocks[(a%p)*p+c%p] += b.BlockEdges[a*b.FineP+c]
		}
	}
	groups := make([]int64, p)
	for g := range p {
		// The ids x < n with x mod p = g.
		if int64(g) < b.Vertices {
			groups[g] = (b.Vertices-int64(g)-1)/int64(p) + 1
		}
	}
	return NewGrid(b.Source, storage.SchemeHash, p, b.Vertices, b.Edges, groups, blocks)
}

// WriteBlockStats writes b as JSON to path.
func WriteBlockStats(path string, b *BlockStats) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	return nil
}

// ReadBlockStats reads and checks a statistics file: its kind and
// format, the histogram's shape and that it sums to the edges.
func ReadBlockStats(path string) (*BlockStats, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	return DecodeBlockStats(path, data)
}

// DecodeBlockStats parses and checks statistics; where names them in
// errors.
func DecodeBlockStats(where string, data []byte) (*BlockStats, error) {
	var b BlockStats
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("simulate: %s: %w", where, err)
	}
	switch {
	case b.Kind != BlockStatsKind:
		return nil, fmt.Errorf("simulate: %s: kind %q, not %q", where, b.Kind, BlockStatsKind)
	case b.Format != BlockStatsFormat:
		return nil, fmt.Errorf("simulate: %s: format %d; this build reads format %d", where, b.Format, BlockStatsFormat)
	case b.FineP < 1 || b.FineP > 4096 || len(b.BlockEdges) != b.FineP*b.FineP:
		return nil, fmt.Errorf("simulate: %s: fine P %d with %d block counts", where, b.FineP, len(b.BlockEdges))
	case b.Vertices < 0 || b.Vertices > 1<<32:
		return nil, fmt.Errorf("simulate: %s: %d vertices", where, b.Vertices)
	}
	var sum int64
	for i, e := range b.BlockEdges {
		if e < 0 {
			return nil, fmt.Errorf("simulate: %s: block %d has %d edges", where, i, e)
		}
		sum += e
	}
	if sum != b.Edges {
		return nil, fmt.Errorf("simulate: %s: the blocks hold %d edges, the graph %d", where, sum, b.Edges)
	}
	return &b, nil
}
