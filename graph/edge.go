package graph

// Edge is one edge as read from a file: original ids, any order, possibly a
// self-loop or a duplicate. Cleaning turns a []Edge into a simple graph.
type Edge struct {
	U, V uint64
}
