package gpu

// Accessors only tests use.

// maxChunkShare bounds setChunkShare.
const maxChunkShare = 0.45

// setChunkShare sets the share of the room one chunk of JK takes (0: the
// default, ChunkShare); at most maxChunkShare.
func (c *Counter) setChunkShare(f float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunkShare = min(max(f, 0), maxChunkShare)
}
