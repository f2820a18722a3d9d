package abi

import (
	"errors"
	"runtime"
	"unsafe"
)

// Ctx is a device context (tg_ctx): the device memory of one device that
// the library allocates for the caller's slots, scratch and preprocessing,
// within a limit. Its methods wrap the entries that take a context, one a
// call, each naming its entry in the error. A Ctx is not safe for
// concurrent use: the caller serializes its calls, and host arrays passed
// in are read during the call only unless the entry says otherwise.
type Ctx struct {
	lib *Lib
	h   uintptr
	buf []byte
}

// NewCtx creates a context on device (tg_ctx_create) whose allocations
// are capped at memLimit bytes (0: the free device memory at creation less
// a 5% reserve).
func (l *Lib) NewCtx(device int, memLimit uint64) (*Ctx, error) {
	c := &Ctx{lib: l, buf: make([]byte, errBufLen)}
	if err := c.status("tg_ctx_create", l.ctxCreate(int32(device), memLimit, &c.h, &c.buf[0], errBufLen)); err != nil {
		return nil, err
	}
	if c.h == 0 {
		return nil, errors.New("gpu: tg_ctx_create returned no context")
	}
	return c, nil
}

// Destroy releases the context (tg_ctx_destroy), completing its pending
// loads and copies first. Later calls are no-ops; no other method may be
// called after it.
func (c *Ctx) Destroy() {
	if c.h != 0 {
		c.lib.ctxDestroy(c.h)
		c.h = 0
	}
}

func (c *Ctx) status(op string, rc int32) error { return status(op, rc, c.buf) }

// MemUsage is tg_mem_usage: the device bytes the context holds now, its
// limit and the most it has held since it was created.
func (c *Ctx) MemUsage() (used, limit, peak uint64) {
	c.lib.memUsage(c.h, &used, &limit, &peak)
	return used, limit, peak
}

// LoadBlock copies a CSR block (rowptr: its rows' offsets, one more than
// its rows, or none for an empty block; cols its columns, each below ncols)
// into slot, replacing what the slot held (tg_load_block). With async it
// returns once the copies are enqueued on the context's copy stream: the
// arrays must then stay unchanged until the load completes (LoadWait, or a
// call that names the slot).
func (c *Ctx) LoadBlock(slot int32, rowptr []uint64, cols []uint32, ncols int64, async bool) error {
	var a int32
	if async {
		a = 1
	}
	rc := c.lib.loadBlock(c.h, slot, ptr(rowptr), int64(max(len(rowptr)-1, 0)), ptr(cols), int64(len(cols)), ncols, a, &c.buf[0], errBufLen)
	runtime.KeepAlive(rowptr)
	runtime.KeepAlive(cols)
	return c.status("tg_load_block", rc)
}

// LoadWait completes slot's pending load, if it has one (tg_load_wait):
// its copy, its check and its indexes.
func (c *Ctx) LoadWait(slot int32) error {
	return c.status("tg_load_wait", c.lib.loadWait(c.h, slot, &c.buf[0], errBufLen))
}

// FreeBlock releases slot's device memory (tg_free_block).
func (c *Ctx) FreeBlock(slot int32) error {
	return c.status("tg_free_block", c.lib.freeBlock(c.h, slot, &c.buf[0], errBufLen))
}

// Count counts the subtask of three loaded slots with a library kernel
// (tg_count): the triangles and the kernel's CUDA-event milliseconds.
func (c *Ctx) Count(kernel, ij, ik, jk int32) (tri uint64, ms float64, err error) {
	rc := c.lib.count(c.h, kernel, ij, ik, jk, &tri, &ms, &c.buf[0], errBufLen)
	return tri, ms, c.status("tg_count", rc)
}

// LocalOut is tg_local_out with Go slices: the host arrays tg_count_local
// adds a subtask's per-vertex and per-edge counts to (nil: not wanted).
type LocalOut struct {
	VI, VJ, VK    []uint64
	EIJ, EIK, EJK []uint64
}

// localOut is tg_local_out of trigrid.h.
type localOut struct {
	vi, vj, vk    *uint64
	eij, eik, ejk *uint64
}

// CountLocal counts the subtask like Count and adds its per-vertex and
// per-edge counts to out's arrays (tg_count_local); a failed call adds
// nothing.
func (c *Ctx) CountLocal(kernel, ij, ik, jk int32, out LocalOut) (tri uint64, ms float64, err error) {
	o := localOut{vi: ptr(out.VI), vj: ptr(out.VJ), vk: ptr(out.VK), eij: ptr(out.EIJ), eik: ptr(out.EIK), ejk: ptr(out.EJK)}
	rc := c.lib.countLocal(c.h, kernel, ij, ik, jk, &o, &tri, &ms, &c.buf[0], errBufLen)
	runtime.KeepAlive(out)
	return tri, ms, c.status("tg_count_local", rc)
}

// RowsSubtask is tg_rows_subtask with Go slices: a subtask's ij and ik as
// host CSR blocks of the same rows (IKOff nil: ik is ij).
type RowsSubtask struct {
	IJOff  []uint64
	IJCols []uint32
	IKOff  []uint64
	IKCols []uint32
}

// rowsSubtask is tg_rows_subtask of trigrid.h.
type rowsSubtask struct {
	ijRowptr *uint64
	ijCols   *uint32
	ikRowptr *uint64
	ikCols   *uint32
	nrows    int64
}

// CountRows counts subs, which share the jk in slot jk, streaming each
// one's ij and ik through the device in row ranges (tg_count_rows, at
// most RowsMaxSubtasks of them): tri[i] and ms[i] (len(subs) each) receive
// subtask i's triangles and milliseconds; parts is the number of ranges.
func (c *Ctx) CountRows(kernel, jk int32, subs []RowsSubtask, tri []uint64, ms []float64) (parts int64, err error) {
	if len(subs) == 0 || len(tri) < len(subs) || len(ms) < len(subs) {
		return 0, errors.New("gpu: tg_count_rows: no subtasks, or fewer results than subtasks")
	}
	cs := make([]rowsSubtask, len(subs))
	for i, s := range subs {
		cs[i] = rowsSubtask{ijRowptr: ptr(s.IJOff), ijCols: ptr(s.IJCols), ikRowptr: ptr(s.IKOff), ikCols: ptr(s.IKCols),
			nrows: int64(max(len(s.IJOff)-1, 0))}
	}
	rc := c.lib.countRows(c.h, kernel, jk, &cs[0], int32(len(cs)), &tri[0], &ms[0], &parts, &c.buf[0], errBufLen)
	runtime.KeepAlive(subs)
	runtime.KeepAlive(cs)
	return parts, c.status("tg_count_rows", rc)
}

// Preprocess cleans and orients n-vertex compact-id pairs (u then v) into
// the forward CSR in slot (tg_preprocess), copying the forward graph and
// the ranks back into rowptr, cols and rank when they are not nil. It
// returns the CUDA-event milliseconds.
func (c *Ctx) Preprocess(slot int32, pairs []uint32, n uint64, rowptr []uint64, cols, rank []uint32, st *PrepStats) (float64, error) {
	var ms float64
	rc := c.lib.preprocess(c.h, slot, ptr(pairs), uint64(len(pairs)/2), n, ptr(rowptr), ptr(cols), ptr(rank), &st[0], &ms, &c.buf[0], errBufLen)
	runtime.KeepAlive(pairs)
	return ms, c.status("tg_preprocess", rc)
}

// IDsOut is what the preprocessing from the input's own ids copies back
// (nil: not wanted): the forward graph's offsets and columns and each
// forward id's input id, with room for MaxVertices vertices.
type IDsOut struct {
	MaxVertices uint64
	Rowptr      []uint64
	Cols        []uint32
	Orig        []uint64
}

// PrepIDs builds the forward graph of npairs pairs of the input's own ids
// at edges (host memory, ids of width 4 or 8 bytes) into slot: the device
// compacts, cleans and orients them (tg_prep_ids), copying back what out
// has room for. It returns the milliseconds.
func (c *Ctx) PrepIDs(slot int32, edges unsafe.Pointer, npairs uint64, width int32, out IDsOut, st *PrepStats) (float64, error) {
	return c.prepIDs(slot, 0, edges, npairs, width, out, st)
}

// PrepIDsInput is PrepIDs of the pairs the context's input buffer holds
// (InputAlloc, InputCopy), which it consumes.
func (c *Ctx) PrepIDsInput(slot int32, npairs uint64, width int32, out IDsOut, st *PrepStats) (float64, error) {
	return c.prepIDs(slot, 1, nil, npairs, width, out, st)
}

func (c *Ctx) prepIDs(slot, fromInput int32, edges unsafe.Pointer, npairs uint64, width int32, out IDsOut, st *PrepStats) (float64, error) {
	var ms float64
	rc := c.lib.prepIDs(c.h, slot, fromInput, edges, npairs, width, out.MaxVertices, ptr(out.Rowptr), ptr(out.Cols), ptr(out.Orig), &st[0], &ms, &c.buf[0], errBufLen)
	runtime.KeepAlive(out)
	return ms, c.status("tg_prep_ids", rc)
}

// InputAlloc reserves the context's input buffer of bytes (tg_input_alloc),
// freeing an earlier one.
func (c *Ctx) InputAlloc(bytes uint64) error {
	return c.status("tg_input_alloc", c.lib.inputAlloc(c.h, bytes, &c.buf[0], errBufLen))
}

// InputCopy enqueues a copy of src into the input buffer at offset bytes
// (tg_input_copy_async); src must stay allocated, unchanged and, when it
// was registered, registered until the buffer is consumed or freed.
func (c *Ctx) InputCopy(offset uint64, src []uint32) error {
	if len(src) == 0 {
		return nil
	}
	rc := c.lib.inputCopyAsync(c.h, offset, unsafe.Pointer(&src[0]), uint64(len(src))*4, &c.buf[0], errBufLen)
	return c.status("tg_input_copy_async", rc)
}

// InputFree waits for the input buffer's copies and frees it
// (tg_input_free; none: a no-op).
func (c *Ctx) InputFree() error {
	return c.status("tg_input_free", c.lib.inputFree(c.h, &c.buf[0], errBufLen))
}

// SplitBlocks splits the forward graph in slot src into the p x p blocks
// of a 2D partition, block (i, j) into slots[i*p+j] (tg_split_blocks):
// groups by id mod p without bounds, else range r (ids bounds[r] to
// bounds[r+1]-1) in group groups[r]. nnz (p*p entries) receives each
// block's edges.
func (c *Ctx) SplitBlocks(src, p int32, slots []int32, bounds []uint64, groups []int32, nnz []int64) error {
	if p < 1 || len(slots) < int(p*p) || len(nnz) < int(p*p) {
		return errors.New("gpu: tg_split_blocks: fewer slots or edge counts than blocks")
	}
	rc := c.lib.splitBlocks(c.h, src, p, &slots[0], int32(len(groups)), ptr(bounds), ptr(groups), &nnz[0], &c.buf[0], errBufLen)
	runtime.KeepAlive(bounds)
	runtime.KeepAlive(groups)
	return c.status("tg_split_blocks", rc)
}

// BlockOut copies the block slot holds back to host memory (tg_block_out):
// its offsets into rowptr and its columns into cols (nil: not wanted).
func (c *Ctx) BlockOut(slot int32, rowptr []uint64, cols []uint32) error {
	return c.status("tg_block_out", c.lib.blockOut(c.h, slot, ptr(rowptr), ptr(cols), &c.buf[0], errBufLen))
}

// PiecesBegin reserves the work area of an orientation in pieces
// (tg_pieces_begin): n vertex words, a copy of idMap (nil: none) and room
// for pieces of up to maxItems items, or as many as fit, which it returns.
func (c *Ctx) PiecesBegin(n, maxItems uint64, idMap []uint64) (capacity uint64, err error) {
	rc := c.lib.piecesBegin(c.h, n, maxItems, unsafe.SliceData(idMap), uint64(len(idMap)), &capacity, &c.buf[0], errBufLen)
	runtime.KeepAlive(idMap)
	return capacity, c.status("tg_pieces_begin", rc)
}

// PiecesSort uploads the items of spans (pairs of words: first item and
// count) of base, makes each a key by op (Pieces*), sorts them (flags:
// PiecesUnique, PiecesDegrees) and copies them back to out, or with out
// nil back over the spans themselves, in order, each filled before the
// next (tg_pieces_sort). It returns the keys written and the self-loops
// dropped.
func (c *Ctx) PiecesSort(op, flags int32, base, spans, out []uint64) (nout, loops uint64, err error) {
	rc := c.lib.piecesSort(c.h, op, flags, unsafe.Pointer(unsafe.SliceData(base)), unsafe.SliceData(spans), int32(len(spans)/2),
		unsafe.Pointer(unsafe.SliceData(out)), &nout, &loops, &c.buf[0], errBufLen)
	runtime.KeepAlive(base)
	runtime.KeepAlive(spans)
	runtime.KeepAlive(out)
	return nout, loops, c.status("tg_pieces_sort", rc)
}

// PiecesCSR sorts the keys of spans of base and copies back the forward
// CSR's part for rows row0 .. row0+nrows-1 (tg_pieces_csr): the columns
// into cols (the number returned), or with cols nil back over the spans
// themselves as 32-bit words, in order, each span (two words an item)
// filled before the next; each row's length into counts.
func (c *Ctx) PiecesCSR(base, spans []uint64, row0, nrows uint64, cols, counts []uint32) (uint64, error) {
	var nout uint64
	rc := c.lib.piecesCSR(c.h, unsafe.Pointer(unsafe.SliceData(base)), unsafe.SliceData(spans), int32(len(spans)/2),
		row0, nrows, unsafe.SliceData(cols), unsafe.SliceData(counts), &nout, &c.buf[0], errBufLen)
	runtime.KeepAlive(base)
	runtime.KeepAlive(spans)
	runtime.KeepAlive(cols)
	runtime.KeepAlive(counts)
	return nout, c.status("tg_pieces_csr", rc)
}

// PiecesVertices copies the vertex words to words, or from them with
// toDevice (tg_pieces_vertices).
func (c *Ctx) PiecesVertices(words []uint32, toDevice bool) error {
	var to int32
	if toDevice {
		to = 1
	}
	rc := c.lib.piecesVertices(c.h, unsafe.SliceData(words), to, &c.buf[0], errBufLen)
	runtime.KeepAlive(words)
	return c.status("tg_pieces_vertices", rc)
}

// PiecesRank ranks the vertices by (degree, id) from the vertex words,
// which then hold the ranks, and copies them to rank (tg_pieces_rank). It
// returns the wedges and the largest degree.
func (c *Ctx) PiecesRank(rank []uint32) (wedges, maxDegree uint64, err error) {
	rc := c.lib.piecesRank(c.h, unsafe.SliceData(rank), &wedges, &maxDegree, &c.buf[0], errBufLen)
	runtime.KeepAlive(rank)
	return wedges, maxDegree, c.status("tg_pieces_rank", rc)
}

// PiecesEnd frees the work area (tg_pieces_end).
func (c *Ctx) PiecesEnd() error {
	return c.status("tg_pieces_end", c.lib.piecesEnd(c.h, &c.buf[0], errBufLen))
}

// RangeRow is tg_range_row: a row u's share of a range of rows. Its
// columns cols[Start, Start+Seg) lie in the range; cols[Start, Start+Len)
// run from the first of them to the row's end.
type RangeRow struct {
	Start    uint64
	Seg, Len uint32
}

// RangesBegin takes the whole forward graph's nnz columns at cols
// (registered host memory, read by the kernels until RangesEnd) of n rows
// and reserves a work area of bytes, with bitmaps under ratio
// (tg_ranges_begin).
func (c *Ctx) RangesBegin(cols []uint32, nnz, n, bytes uint64, ratio uint32) error {
	rc := c.lib.rangesBegin(c.h, ptr(cols), nnz, n, bytes, ratio, &c.buf[0], errBufLen)
	return c.status("tg_ranges_begin", rc)
}

// RangesCount counts rows [first, first+nrows), whose columns are the
// graph's from base on, with their offsets and bitmap offsets in rows and
// the rows with columns in the range in entries (registered host memory
// both; tg_ranges_count). It returns the triangles and the milliseconds.
func (c *Ctx) RangesCount(rows []uint32, base, first, nrows uint64, entries []RangeRow) (tri uint64, ms float64, err error) {
	rc := c.lib.rangesCount(c.h, ptr(rows), base, first, nrows, ptr(entries), uint64(len(entries)), &tri, &ms, &c.buf[0], errBufLen)
	runtime.KeepAlive(rows)
	runtime.KeepAlive(entries)
	return tri, ms, c.status("tg_ranges_count", rc)
}

// RangesEnd frees the work area (tg_ranges_end).
func (c *Ctx) RangesEnd() error {
	return c.status("tg_ranges_end", c.lib.rangesEnd(c.h, &c.buf[0], errBufLen))
}
