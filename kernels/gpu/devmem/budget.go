package devmem

// Device memory accounting. The figures mirror the library's allocations
// (kernels/cuda: tg_ctx_malloc in core.cu rounds every allocation up to 256
// bytes, an empty one to 16 first; a slot holds its offsets and its columns
// in two allocations, slots.cu), so that what a subtask needs can be known
// before it runs and P can be chosen by the same rule. The reference library
// (kernels/cuda/ref) allocates by the same rule, which the tests hold.

// allocGranule is the library's allocation granule.
const allocGranule = 256

// ContextBytes is what a context allocates when created (the result words).
const ContextBytes = allocGranule

// AllocBytes is what an allocation of n bytes takes.
func AllocBytes(n int64) int64 {
	if n <= 0 {
		n = 16
	}
	return (n + allocGranule - 1) &^ (allocGranule - 1)
}

// BlockBytes is the device memory of a block of rows rows and edges edges
// in a slot: its offsets and its columns. The slot's indexes (dense-row
// bitmaps, edge-row index) are not counted: they are built only where
// there is room and are freed first when a block or a kernel needs it.
func BlockBytes(rows, edges int64) int64 {
	return AllocBytes((rows+1)*8) + AllocBytes(max(edges, 1)*4)
}

// CopyBytes is what uploading a block copies to the device.
func CopyBytes(rows, edges int64) int64 {
	return (rows+1)*8 + edges*4
}

// SubtaskMinBytes is the least device memory a context needs to count a
// subtask of three blocks given as (rows, edges) with polak, trix, grouptc
// or wetric, whose scratch is optional (wetric builds its bitmaps only
// where they fit): the context and every distinct block. same[i] tells
// that block i is the same block as an earlier one (the whole graph, a
// diagonal subtask), which takes one slot.
func SubtaskMinBytes(blocks [3][2]int64, same [3]bool) int64 {
	b := int64(ContextBytes)
	for i, bl := range blocks {
		if !same[i] {
			b += BlockBytes(bl[0], bl[1])
		}
	}
	return b
}

// PreprocessMinBytes is the least device memory tg_preprocess takes for
// npairs pairs over n vertices (kernels/cuda/preprocess.cu): two 8-byte
// buffers per pair, its counters, four vertex arrays (degrees and ranks of
// 4 bytes, two key arrays of 8) and the slot of the forward graph with its
// offsets, each allocation rounded as the library rounds it. The radix
// sort's scratch and the forward columns come on top, so a context with
// this much free may still run out; one with less always does.
func PreprocessMinBytes(npairs, n uint64) int64 {
	np, nv := int64(max(npairs, 1)), int64(max(n, 1))
	b := 2*AllocBytes(np*8) + AllocBytes(4*4) + AllocBytes(0)
	b += 2*AllocBytes(nv*4) + 2*AllocBytes(nv*8)
	return b + BlockBytes(int64(n), 0)
}
