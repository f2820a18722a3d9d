package pipeline

import (
	"github.com/trigrid/trigrid/counts"
	"github.com/trigrid/trigrid/plan"
)

// Report is the result of one count, for people (cmd formats it) and for
// scripts (its JSON form is the contract of `trigrid count --json`).
type Report struct {
	File      string `json:"file,omitempty"`
	Shards    string `json:"shards,omitempty"`
	Triangles uint64 `json:"triangles"`
	Vertices  int64  `json:"vertices"`
	Edges     int64  `json:"edges"`
	// Wedges is the number of paths of length two in the undirected graph:
	// the sum over vertices of d(d-1)/2.
	Wedges    uint64 `json:"wedges"`
	MaxDegree int64  `json:"max_degree"`
	// MaxOutDegree is the forward graph's largest out-degree; nil (null in
	// JSON, "not recorded" in the report) when a shard manifest does not
	// carry it. An unknown figure is never shown as 0.
	MaxOutDegree *int64 `json:"max_out_degree"`
	Degeneracy   int64  `json:"degeneracy,omitempty"`
	Order        string `json:"order"`
	Kernel       string `json:"kernel"`
	Device       string `json:"device"`
	// KernelRequested is the kernel asked for (--kernel); Kernel is the one
	// that ran, which differs when a GPU kernel fell back to the CPU.
	KernelRequested string `json:"kernel_requested,omitempty"`
	// Fallback says why the count ran on the CPU although a GPU could have
	// been used (no library, not a library, wrong ABI, no device).
	Fallback string `json:"fallback,omitempty"`
	// Removed and Input are nil (null in JSON) when unknown, as for shards
	// whose manifest does not record them.
	Removed *Removed `json:"removed"`
	Input   *Input   `json:"input"`
	Seconds Phases   `json:"seconds"`
	// Transitivity is the global clustering coefficient, 3 x triangles /
	// wedges (0 without wedges).
	Transitivity float64 `json:"transitivity"`
	// AverageClustering is the mean local clustering coefficient over all
	// vertices, those of degree below 2 counting 0; set only when the
	// count made per-vertex counts.
	AverageClustering *float64 `json:"average_clustering,omitempty"`
	// PerVertex says what became of the per-vertex and per-edge counts:
	// files written, top vertices and edges.
	PerVertex *counts.Summary `json:"per_vertex,omitempty"`
	// EdgesPerSecond is undirected edges over the total wall time.
	EdgesPerSecond float64 `json:"edges_per_second"`
	// Verified is set when --verify recounted with the reference kernel.
	Verified  bool           `json:"verified,omitempty"`
	Partition *PartitionInfo `json:"partition,omitempty"`
	// Device is, for partitioned runs on GPUs, the device-memory
	// high-water mark, the bytes copied to the devices and their idle share.
	DeviceMemory *DeviceReport `json:"device_memory,omitempty"`
	// Engine is, for partitioned runs, where the count phase went: the
	// blocks' loads on the host's cores, the slots' waits, uploads and
	// kernels, and the devices' busy share of the phase.
	Engine *EngineReport `json:"engine,omitempty"`
	// Plan is how the count ran (plan.Choose), with the reason for each
	// choice; nil for shards.
	Plan *plan.Plan `json:"plan,omitempty"`
}

// Removed says what cleaning dropped.
type Removed struct {
	SelfLoops   uint64 `json:"self_loops"`
	Duplicates  uint64 `json:"duplicates"`
	IsolatedIDs uint64 `json:"isolated_ids"`
	BadLines    int64  `json:"bad_lines"`
	// UnusedDeclaredIDs counts the ids that the file declares
	// (Input.DeclaredVertices: a Matrix Market size line, a METIS or DIMACS
	// header, a GAP graph) but no edge uses: vertices without edges, which
	// the count leaves out like isolated ids. Zero for other formats.
	UnusedDeclaredIDs uint64 `json:"unused_declared_ids,omitempty"`
}

// Input describes the file as read.
type Input struct {
	Format      string `json:"format"`
	Compression string `json:"compression,omitempty"`
	Bytes       int64  `json:"bytes"`
	Lines       int64  `json:"lines,omitempty"`
	RawEdges    int64  `json:"raw_edges"`
	// Header is the text of the line skipped as a column header
	// ("FromNodeId ToNodeId") and HeaderLine its 1-based number; both are
	// empty when no line was skipped as a header.
	Header     string `json:"header,omitempty"`
	HeaderLine int64  `json:"header_line,omitempty"`
	// DeclaredVertices is the vertex count the file declares: max(rows,
	// cols) of a Matrix Market size line, n of a METIS or DIMACS header,
	// the vertices of a GAP graph; zero for other formats.
	DeclaredVertices uint64 `json:"declared_vertices,omitempty"`
	// Archive is "tar" when the graph was a member of a tar archive, and
	// Member that member's name.
	Archive string `json:"archive,omitempty"`
	Member  string `json:"member,omitempty"`
	// Staged: the edge list went to the device while the file was read.
	Staged bool `json:"staged,omitempty"`
}

// Phases holds wall seconds per phase. Kernel is the time inside the
// counting kernels (CUDA events on a GPU), part of Count.
type Phases struct {
	Read      float64 `json:"read"`
	Clean     float64 `json:"clean"`
	Order     float64 `json:"order"`
	Partition float64 `json:"partition,omitempty"`
	Count     float64 `json:"count"`
	Kernel    float64 `json:"kernel"`
	// DeviceWait is how long the count waited, once the file was read,
	// for its device to be found and started (which begins with the read);
	// zero when the device was ready first.
	DeviceWait float64 `json:"device_wait,omitempty"`
	// StageWait is how long the count waited, once the file was read,
	// for the last of the edge list to go to the device (Input.Staged).
	StageWait float64 `json:"stage_wait,omitempty"`
	// Write is the time spent checking per-vertex and per-edge counts
	// against the total and writing their files; zero without them.
	Write float64 `json:"write,omitempty"`
	Total float64 `json:"total"`
}

// PartitionInfo describes a count that went through 2D partitions.
type PartitionInfo struct {
	Scheme string `json:"scheme"`
	P      int    `json:"p"`
	// PFit is, when P was chosen (P = 0), the smallest P whose subtasks
	// fit; P is larger when a larger one was modelled faster (one GPU).
	PFit int `json:"p_fit,omitempty"`
	// RowStream: the GPU kept each subtask's JK resident and streamed IJ
	// and IK in row ranges (Config.RowStream).
	RowStream bool            `json:"row_stream,omitempty"`
	Blocks    int             `json:"blocks"`
	Subtasks  []SubtaskReport `json:"subtasks"`
}

// SubtaskReport is one subtask's share of the count.
type SubtaskReport struct {
	I         int     `json:"i"`
	J         int     `json:"j"`
	K         int     `json:"k"`
	Triangles uint64  `json:"triangles"`
	Edges     int64   `json:"edges"`
	Work      int64   `json:"work"`
	KernelMS  float64 `json:"kernel_ms"`
}

// removed returns rep.Removed, allocating it on first use.
func (rep *Report) removed() *Removed {
	if rep.Removed == nil {
		rep.Removed = new(Removed)
	}
	return rep.Removed
}

// noteReason adds a choice made once the blocks are known to the plan
// the count runs (none for shards).
func (r *Report) noteReason(why plan.Reason) {
	if r.Plan != nil {
		r.Plan.Reasons = append(r.Plan.Reasons, why)
	}
}
