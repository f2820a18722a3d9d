package worker

import (
	"context"
	"sync"
	"sync/atomic"
)

// Blocks is the decoded blocks a worker's slots read: its cache, bounded
// by the raw CSR bytes of CacheBytes. A Worker makes its own unless
// Config.Blocks hands it one made before it, so that a caller that knows
// the subtasks before the worker can start (an in-process run, while its
// devices start) loads their blocks ahead with Preload.
type Blocks struct {
	cache *blockCache
	stats statsAcc // the loads Preload made
}

// NewBlocks is an empty cache of cacheBytes (0: DefaultCacheBytes;
// negative keeps nothing).
func NewBlocks(cacheBytes int64) *Blocks {
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	return &Blocks{cache: newBlockCache(cacheBytes)}
}

// Share bounds the cache for n workers that read it (Config.Blocks): n
// times the bytes it was made with, as each would keep as much alone.
// Call it once, before the workers start.
func (b *Blocks) Share(n int) {
	c := b.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit > 0 && n > 1 {
		c.limit *= int64(n)
	}
}

// Preload loads the blocks order names from src (the Config.Source of
// the worker that will read them), first to last, on loaders goroutines,
// each while it fits the cache beside what the cache keeps (one that does
// not is left for the worker to load when it needs it), and returns when
// they are loaded or ctx ends. A load that fails is not kept: the worker
// meets the error again and reports it.
func (b *Blocks) Preload(ctx context.Context, src Source, order [][2]int, loaders int) {
	_, size := sourceLayout(src)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(loaders, 1) {
		wg.Go(func() {
			for ctx.Err() == nil {
				x := int(next.Add(1) - 1)
				if x >= len(order) {
					return
				}
				ij := order[x]
				k := blockKey{"", ij[0], ij[1]}
				if b.cache.has(k) || size != nil && !b.cache.room(size(ij[0], ij[1])) {
					continue
				}
				_, lt, hit, _ := b.cache.lookup(ctx, k, loader(src, ij))
				b.stats.loaded(lt, hit)
			}
		})
	}
	wg.Wait()
}

// Stats is what Preload loaded: Loads, Fetch and Decode (the loads a
// worker made on the cache are its own Stats').
func (b *Blocks) Stats() Stats {
	s := b.stats.get()
	return Stats{Loads: s.Loads, Fetch: s.Fetch, Decode: s.Decode}
}

// cache is the cache a worker of c reads: c.Blocks's, or a new one.
func (c *Config) cache() *blockCache {
	if c.Blocks != nil {
		return c.Blocks.cache
	}
	return newBlockCache(c.CacheBytes)
}
