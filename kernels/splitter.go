package kernels

// BlockGroups says how a device split groups the vertices of a forward
// graph: P groups, by id mod P (the hash scheme, local id = id div P) when
// Bounds is nil, else by ranges: range r holds the ids Bounds[r] ..
// Bounds[r+1]-1 and belongs to group Groups[r], whose local ids number its
// ranges' vertices in id order (partition.Layout's rule for both schemes).
type BlockGroups struct {
	P      int
	Bounds []uint64
	Groups []int32
}
