package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

func block(rows, edges int) *graph.CSR {
	return &graph.CSR{Offsets: make([]uint64, rows+1), Cols: make([]uint32, edges)}
}

func TestCacheBound(t *testing.T) {
	ctx := context.Background()
	b := block(9, 30) // 80 + 120 = 200 bytes
	var loads atomic.Int64
	load := func(context.Context) (*graph.CSR, LoadTimes, error) {
		loads.Add(1)
		return b, LoadTimes{Fetch: 1, Decode: 1}, nil
	}
	c := newBlockCache(500)
	for i := range 10 {
		got, lt, err := c.get(ctx, blockKey{"s", i, 0}, load)
		if err != nil || got != b || lt.Fetch != 1 {
			t.Fatalf("get %d = %p, %v, %v", i, got, lt, err)
		}
		if bytes, n := c.size(); bytes > 500 || n > 2 {
			t.Fatalf("cache holds %d bytes in %d blocks, bound 500", bytes, n)
		}
	}
	// The two most recent stay; a hit costs no load and no load time.
	if _, lt, _ := c.get(ctx, blockKey{"s", 9, 0}, load); lt != (LoadTimes{}) || loads.Load() != 10 {
		t.Fatalf("hit reloaded: %d loads, times %v", loads.Load(), lt)
	}
	c.get(ctx, blockKey{"s", 0, 0}, load)
	if loads.Load() != 11 {
		t.Fatalf("evicted block not reloaded: %d loads", loads.Load())
	}
	// Another source's block (i, j) is another block.
	c.get(ctx, blockKey{"t", 9, 0}, load)
	if loads.Load() != 12 {
		t.Fatalf("blocks of two sources shared: %d loads", loads.Load())
	}
	// A block over the bound is kept alone rather than dropped at once.
	big := newBlockCache(100)
	big.get(ctx, blockKey{"s", 0, 0}, load)
	if bytes, n := big.size(); n != 1 || bytes != 200 {
		t.Fatalf("over-bound block: %d bytes in %d blocks", bytes, n)
	}
	off := newBlockCache(-1)
	off.get(ctx, blockKey{"s", 0, 0}, load)
	if bytes, n := off.size(); n != 0 || bytes != 0 {
		t.Fatalf("disabled cache keeps %d bytes", bytes)
	}
}

func TestCacheSharesConcurrentLoadsAndForgetsErrors(t *testing.T) {
	ctx := context.Background()
	c := newBlockCache(1 << 20)
	var loads atomic.Int64
	gate := make(chan struct{})
	load := func(context.Context) (*graph.CSR, LoadTimes, error) {
		loads.Add(1)
		<-gate
		return block(1, 1), LoadTimes{}, nil
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { c.get(ctx, blockKey{"", 1, 1}, load) })
	}
	for loads.Load() == 0 {
	}
	close(gate)
	wg.Wait()
	if loads.Load() != 1 {
		t.Fatalf("%d loads for one block", loads.Load())
	}
	fails := 0
	bad := func(context.Context) (*graph.CSR, LoadTimes, error) {
		fails++
		return nil, LoadTimes{}, errors.New("bad shard")
	}
	for range 2 {
		if _, _, err := c.get(ctx, blockKey{"", 2, 2}, bad); err == nil {
			t.Fatal("no error")
		}
	}
	if fails != 2 {
		t.Fatalf("a failed load was cached (%d loads)", fails)
	}
}

// get is lookup without its hit.
func (c *blockCache) get(ctx context.Context, key blockKey, load func(ctx context.Context) (*graph.CSR, LoadTimes, error)) (*graph.CSR, LoadTimes, error) {
	b, lt, _, err := c.lookup(ctx, key, load)
	return b, lt, err
}
