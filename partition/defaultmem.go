package partition

import (
	"os"
	"strings"
)

const (
	// inMemoryBytesPerEdge bounds the in-memory path's peak per raw input
	// edge: the raw edges (16 bytes), cleaning's scratch and the forward
	// graph with its id map.
	inMemoryBytesPerEdge = 40
	// maxInMemoryDefault is the largest peak for which DefaultMemLimit
	// chooses the in-memory path.
	maxInMemoryDefault = 1 << 30
	// unknownHostMemory stands for the machine's memory where it cannot be
	// read.
	unknownHostMemory = 8 << 30
)

// DefaultMemLimit is Config.MemLimit for a run given none, for the input
// at path on a machine with hostMem bytes of memory (0 = unknown). Small
// inputs are split in memory (0), which is the fastest path when the
// whole graph is small; the bound on their peak uses the most edges the
// file can hold (8 bytes per edge for a binary edge list, 4 for text), so
// a compressed input or standard input, whose edge count the size does
// not bound, never goes there. Every other input streams with half of
// hostMem as the ceiling for its per-vertex arrays and buffers of
// DefaultWorkMem, so a large ceiling costs no speed.
func DefaultMemLimit(path string, hostMem int64) int64 {
	if hostMem <= 0 {
		hostMem = unknownHostMemory
	}
	if edges := maxEdgesOf(path); edges >= 0 && edges*inMemoryBytesPerEdge <= min(maxInMemoryDefault, hostMem/8) {
		return 0
	}
	return hostMem / 2
}

// maxEdgesOf bounds the raw edges of an uncompressed file from its size,
// or returns -1 when the size does not bound them.
func maxEdgesOf(path string) int64 {
	if path == "-" {
		return -1
	}
	name := strings.ToLower(path)
	for _, ext := range []string{".gz", ".zst", ".zstd", ".bz2", ".xz"} {
		if strings.HasSuffix(name, ext) {
			return -1
		}
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return -1
	}
	if strings.HasSuffix(name, ".bin") {
		return fi.Size() / 8
	}
	return fi.Size() / 4
}
