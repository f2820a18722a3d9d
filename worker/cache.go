package worker

import (
	"container/list"
	"context"
	"sync"

	"github.com/trigrid/trigrid/graph"
)

// blockKey names one block of one source: the store URL of the
// assignment ("" for the worker's own Source) and (i, j).
type blockKey struct {
	src  string
	i, j int
}

// blockCache is an LRU of decoded blocks shared by every slot, bounded by
// raw CSR bytes. Concurrent misses on one block share a single load.
// Blocks in use stay alive through their users regardless of the bound;
// the bound decides only what is kept for later assignments.
type blockCache struct {
	limit int64 // negative: keep nothing

	mu      sync.Mutex
	entries map[blockKey]*cacheEntry
	lru     *list.List // front = most recent; values are blockKeys
	bytes   int64
}

type cacheEntry struct {
	ready chan struct{} // closed once b and err are set
	b     *graph.CSR
	err   error
	size  int64
	elem  *list.Element // nil while loading or when not retained
}

func newBlockCache(limit int64) *blockCache {
	return &blockCache{limit: limit, entries: map[blockKey]*cacheEntry{}, lru: list.New()}
}

func csrBytes(b *graph.CSR) int64 { return 8*int64(len(b.Offsets)) + 4*int64(len(b.Cols)) }

// lookup returns the block key names, loading it with load on a miss,
// and whether it was a hit: the block was held or another caller was
// loading it, so this call made no load. The load times are those of a
// load this call performed; a hit, or a wait on another caller's load,
// costs nothing here.
func (c *blockCache) lookup(ctx context.Context, key blockKey, load func(ctx context.Context) (*graph.CSR, LoadTimes, error)) (*graph.CSR, LoadTimes, bool, error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		if e.elem != nil {
			c.lru.MoveToFront(e.elem)
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
			return e.b, LoadTimes{}, true, e.err
		case <-ctx.Done():
			return nil, LoadTimes{}, true, ctx.Err()
		}
	}
	e := &cacheEntry{ready: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	b, lt, err := load(ctx)
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
	return b, lt, false, err
}

// held is the raw CSR bytes the cache keeps.
func (c *blockCache) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// peek returns the block key names when it is loaded, without loading it,
// waiting for a load or counting as a use; nil otherwise.
func (c *blockCache) peek(key blockKey) *graph.CSR {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	select {
	case <-e.ready:
		if e.err == nil {
			return e.b
		}
	default:
	}
	return nil
}

// evict drops least recently used blocks until the cache fits, keeping
// keep (the block just loaded) even if it alone is over the limit.
func (c *blockCache) evict(keep blockKey) {
	for c.bytes > c.limit {
		back := c.lru.Back()
		if back == nil {
			return
		}
		key := back.Value.(blockKey)
		if key == keep {
			return
		}
		e := c.entries[key]
		c.lru.Remove(back)
		delete(c.entries, key)
		c.bytes -= e.size
	}
}
