package storage

import (
	"sync"

	"github.com/trigrid/trigrid/internal/hugepage"
)

// Decoding a shard writes fresh memory: the decompressed sections, then
// the block's offsets and columns. A page of fresh memory costs a fault
// when first written, and a process that decodes a graph's shards touches
// some twice the graph's CSR; in 4 KiB pages those faults, not the
// decoding, take most of a decode. So the decompressed sections come from
// buffers kept for reuse (a section is garbage once decoded), and every
// large array is advised huge before it is first written (hugepage.Advise:
// 512 times fewer faults).

// maxScratch bounds the section buffers kept for reuse: larger ones are
// made for one decode (huge pages, not kept), so that the pool never holds
// more than a few such buffers per decoding core.
const maxScratch = 64 << 20

var scratchPool sync.Pool // *[]byte, cap <= maxScratch

// getScratch returns a buffer of at least n bytes: one kept for reuse
// when one is large enough, else fresh memory.
func getScratch(n uint64) []byte {
	if n <= maxScratch {
		if p, ok := scratchPool.Get().(*[]byte); ok {
			if uint64(cap(*p)) >= n {
				return (*p)[:cap(*p)]
			}
			// Too small for this section: dropped, as the buffers of
			// larger blocks replace those of smaller ones.
		}
	}
	return freshBytes(n)
}

// putScratch hands a buffer from getScratch back for reuse; nothing may
// use it after.
func putScratch(b []byte) {
	if b == nil || cap(b) > maxScratch {
		return
	}
	b = b[:cap(b)]
	scratchPool.Put(&b)
}

// freshBytes is n bytes of fresh memory, advised huge.
func freshBytes(n uint64) []byte { return fresh[byte](n) }

// fresh is make([]T, n) advised huge before its first write.
func fresh[T any](n uint64) []T {
	s := make([]T, n)
	hugepage.Advise(s)
	return s
}
