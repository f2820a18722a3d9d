package worker

// Accessors only tests use.

// size reports the bytes and blocks retained.
func (c *blockCache) size() (bytes int64, blocks int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.lru.Len()
}
