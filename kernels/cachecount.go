package kernels

// CacheCounter hears the lookups of a block cache, for metrics (a
// worker's trigrid_worker_block_cache_* series): one call per block a
// count needs, hit when the cache held the block (or was already loading
// it) so that no load or upload was made for this lookup. Implementations
// are cheap and safe for concurrent use.
type CacheCounter interface {
	Lookup(hit bool)
}

// CacheCounted is a Counter with a block cache of its own (blocks kept in
// device memory between subtasks) that reports its lookups. The worker
// calls SetCacheCounter once, before the counter's first Count.
type CacheCounted interface {
	SetCacheCounter(CacheCounter)
}
