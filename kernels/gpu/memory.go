package gpu

import "github.com/trigrid/trigrid/kernels/gpu/devmem"

// The device memory model, for the callers that size a count by it
// (pipeline, cmd): kernels/gpu/devmem holds it, beside the slots and pins
// it accounts for.

// ContextBytes is what a context allocates when created.
const ContextBytes = devmem.ContextBytes

// BlockBytes is the device memory of a block of rows rows and edges edges
// in a slot (devmem.BlockBytes).
func BlockBytes(rows, edges int64) int64 { return devmem.BlockBytes(rows, edges) }

// PreprocessMinBytes is the least device memory tg_preprocess takes for
// npairs pairs over n vertices (devmem.PreprocessMinBytes).
func PreprocessMinBytes(npairs, n uint64) int64 { return devmem.PreprocessMinBytes(npairs, n) }

// UploadPlan is what a slot cache uploads for a sequence of subtasks.
type UploadPlan = devmem.UploadPlan

// PlanUploads simulates a counter's slot cache on seq (devmem.PlanUploads).
func PlanUploads(seq [][3]int, rows, edges func(id int) int64, capacity int64, slots, horizon int) UploadPlan {
	return devmem.PlanUploads(seq, rows, edges, capacity, slots, horizon)
}
