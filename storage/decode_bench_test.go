package storage

import (
	"context"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkDecodeStore loads (FetchShard, then DecodeBlock) every block of
// the shard store at $TRIGRID_BENCH_SHARDS, GOMAXPROCS blocks at a time
// (go test -cpu 1,16), and reports MB/s of CSR produced: how fast a
// worker's cores can turn a graph's shards into blocks.
func BenchmarkDecodeStore(b *testing.B) {
	dir := os.Getenv("TRIGRID_BENCH_SHARDS")
	if dir == "" {
		b.Skip("TRIGRID_BENCH_SHARDS is not set: no store to decode")
	}
	ctx := context.Background()
	st, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	m, err := ReadManifest(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	var raw int64
	for _, s := range m.Shards {
		raw += 8*(int64(s.Rows)+1) + 4*int64(s.Edges)
	}
	b.SetBytes(raw)
	for b.Loop() {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make([]error, runtime.GOMAXPROCS(0))
		for w := range errs {
			wg.Go(func() {
				for {
					x := int(next.Add(1) - 1)
					if x >= len(m.Shards) || errs[w] != nil {
						return
					}
					s := m.Shards[x]
					if _, errs[w] = LoadShard(ctx, st, m, s.I, s.J); errs[w] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
