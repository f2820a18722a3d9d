package counts

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/trigrid/trigrid/internal/atomicfile"
)

// Format is an output format, chosen by a file's extension.
type Format int

const (
	FormatTSV     Format = iota // .tsv, .tsv.gz, .tsv.zst: a header line, then tab-separated rows
	FormatBinary                // .bin: trigrid's binary counts file (docs/formats.md)
	FormatParquet               // .parquet: one row group per million rows, zstd pages
)

// Extensions lists the file name endings FormatOf accepts.
var Extensions = []string{".tsv", ".tsv.gz", ".tsv.zst", ".bin", ".parquet"}

// FormatOf returns the format and the compression ("", "gzip", "zstd")
// of an output path, or an error naming the path.
func FormatOf(path string) (Format, string, error) {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasSuffix(base, ".tsv"):
		return FormatTSV, "", nil
	case strings.HasSuffix(base, ".tsv.gz"):
		return FormatTSV, "gzip", nil
	case strings.HasSuffix(base, ".tsv.zst"), strings.HasSuffix(base, ".tsv.zstd"):
		return FormatTSV, "zstd", nil
	case strings.HasSuffix(base, ".bin"):
		return FormatBinary, "", nil
	case strings.HasSuffix(base, ".parquet"):
		return FormatParquet, "", nil
	}
	return 0, "", fmt.Errorf("counts: %s: unknown output format: the name must end in one of %s", path, strings.Join(Extensions, ", "))
}

// Binary file layout (docs/formats.md): a 24-byte header, then fixed-size
// little-endian records.
const (
	binaryMagic     = "TGCOUNTS"
	binaryVersion   = 1
	BinaryVertices  = 1 // record: id u64, degree u64, triangles u64, clustering f64
	BinaryEdges     = 2 // record: u u64, v u64, support u64
	binaryHeaderLen = 24
)

// batchRows is how many rows writeRows hands a writer at once; the
// context is checked between batches.
const batchRows = 1 << 15

// WriteVertices writes the per-vertex rows of c (id, degree, triangles,
// clustering; ascending id) to path in the format its extension names,
// as WriteFiles does.
func WriteVertices(ctx context.Context, path string, c *Counts) (rows int64, err error) {
	rows, _, err = WriteFiles(ctx, path, "", c)
	return rows, err
}

// WriteEdges writes the per-edge rows of c (u, v, support with u < v in
// original ids) to path like WriteVertices. c must have PerEdge.
func WriteEdges(ctx context.Context, path string, c *Counts) (int64, error) {
	_, rows, err := WriteFiles(ctx, "", path, c)
	return rows, err
}

// WriteFiles writes the per-vertex rows of c to vpath and its per-edge
// rows to epath (either may be "", and epath needs c.PerEdge), each in the
// format its extension names, and returns the rows of each. The files
// appear together or not at all: rows go to temporary files beside the
// targets, which are renamed over them only once both are complete and
// synced, and are removed on any error or cancellation (see
// internal/atomicfile: new files get 0666 less the umask, replaced ones
// keep their mode, a symlink is written through).
func WriteFiles(ctx context.Context, vpath, epath string, c *Counts) (vrows, erows int64, err error) {
	for _, p := range []string{vpath, epath} {
		if p != "" {
			if _, _, err := FormatOf(p); err != nil {
				return 0, 0, err
			}
		}
	}
	if epath != "" && (!c.PerEdge || c.Edges == nil) {
		return 0, 0, fmt.Errorf("counts: %s: no per-edge support was counted", epath)
	}
	var g atomicfile.Group
	defer g.Abort() // nothing once committed
	if vpath != "" {
		vrows, err = writeFile(ctx, &g, vpath, []string{"id", "degree", "triangles", "clustering"}, BinaryVertices,
			func(w rowWriter) (int64, error) { return writeRows(ctx, w, c.Vertices()) })
		if err != nil {
			return 0, 0, err
		}
	}
	if epath != "" {
		erows, err = writeFile(ctx, &g, epath, []string{"u", "v", "support"}, BinaryEdges,
			func(w rowWriter) (int64, error) {
				n, err := writeRows(ctx, w, c.EdgeRows())
				if err == nil {
					err = c.edgeErr()
				}
				return n, err
			})
		if err != nil {
			return 0, 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	if err := g.Commit(); err != nil {
		return 0, 0, fmt.Errorf("counts: %w", err)
	}
	return vrows, erows, nil
}

// rowWriter takes rows of one kind in order, in batches: []Vertex or
// []Edge. A batch is not kept after write returns.
type rowWriter interface {
	write(rows any) error
	close() error
}

// writeRows hands rows to w in batches of batchRows and returns how many
// it handed over.
func writeRows[T any](ctx context.Context, w rowWriter, rows iter.Seq[T]) (n int64, err error) {
	batch := make([]T, 0, batchRows)
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		err := w.write(batch)
		n += int64(len(batch))
		batch = batch[:0]
		return err
	}
	for r := range rows {
		if batch = append(batch, r); len(batch) == batchRows {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	return n, flush()
}

// writeFile writes one output of g: its rows through body into a
// temporary file, which g closes and renames.
func writeFile(ctx context.Context, g *atomicfile.Group, path string, header []string, kind uint16, body func(rowWriter) (int64, error)) (n int64, err error) {
	format, comp, err := FormatOf(path)
	if err != nil {
		return 0, err
	}
	f, err := g.Create(path)
	if err != nil {
		return 0, fmt.Errorf("counts: %w", err)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("counts: %s: %w", path, err)
		}
	}()
	var w rowWriter
	switch format {
	case FormatTSV:
		w, err = newTSVWriter(f, comp, header)
	case FormatBinary:
		w, err = newBinaryWriter(f, kind)
	case FormatParquet:
		w = newParquetWriter(f, kind)
	}
	if err != nil {
		return 0, err
	}
	if n, err = body(w); err != nil {
		w.close()
		return n, err
	}
	return n, w.close()
}

// tsvWriter writes a header line and one tab-separated line per row;
// floats in the shortest form that reads back to the same float64. A
// batch is formatted in parts on several goroutines (the shortest float
// costs more than writing its bytes), then written in order.
type tsvWriter struct {
	buf   *bufio.Writer
	comp  io.WriteCloser // nil when plain
	parts [][]byte       // one formatted part of a batch per goroutine
}

// tsvPartRows is the fewest rows worth a goroutine of their own.
const tsvPartRows = 2048

func newTSVWriter(f *os.File, comp string, header []string) (*tsvWriter, error) {
	t := &tsvWriter{}
	var out io.Writer = f
	switch comp {
	case "gzip":
		t.comp = gzip.NewWriter(f)
		out = t.comp
	case "zstd":
		z, err := zstd.NewWriter(f)
		if err != nil {
			return nil, err
		}
		t.comp, out = z, z
	}
	t.buf = bufio.NewWriterSize(out, 1<<20)
	_, err := t.buf.WriteString(strings.Join(header, "\t") + "\n")
	return t, err
}

func (t *tsvWriter) write(rows any) error {
	switch r := rows.(type) {
	case []Vertex:
		return t.writeParts(len(r), func(b []byte, lo, hi int) []byte {
			for _, v := range r[lo:hi] {
				b = appendVertexTSV(b, v)
			}
			return b
		})
	case []Edge:
		return t.writeParts(len(r), func(b []byte, lo, hi int) []byte {
			for _, e := range r[lo:hi] {
				b = appendEdgeTSV(b, e)
			}
			return b
		})
	}
	return fmt.Errorf("tsv: rows of type %T", rows)
}

// writeParts formats rows [0, n) with format in contiguous parts on up to
// GOMAXPROCS goroutines and writes the parts in order.
func (t *tsvWriter) writeParts(n int, format func(b []byte, lo, hi int) []byte) error {
	parts := max(1, min(runtime.GOMAXPROCS(0), n/tsvPartRows))
	for len(t.parts) < parts {
		t.parts = append(t.parts, nil)
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Go(func() { t.parts[p] = format(t.parts[p][:0], lo, hi) })
	}
	wg.Wait()
	for _, b := range t.parts[:parts] {
		if _, err := t.buf.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func appendVertexTSV(b []byte, r Vertex) []byte {
	b = strconv.AppendUint(b, r.ID, 10)
	b = append(b, '\t')
	b = strconv.AppendUint(b, r.Degree, 10)
	b = append(b, '\t')
	b = strconv.AppendUint(b, r.Triangles, 10)
	b = append(b, '\t')
	b = strconv.AppendFloat(b, r.Clustering, 'g', -1, 64)
	return append(b, '\n')
}

func appendEdgeTSV(b []byte, r Edge) []byte {
	b = strconv.AppendUint(b, r.U, 10)
	b = append(b, '\t')
	b = strconv.AppendUint(b, r.V, 10)
	b = append(b, '\t')
	b = strconv.AppendUint(b, r.Support, 10)
	return append(b, '\n')
}

func (t *tsvWriter) close() error {
	if err := t.buf.Flush(); err != nil {
		return err
	}
	if t.comp != nil {
		return t.comp.Close()
	}
	return nil
}

// binaryWriter writes the header with a zero count, the records, and then
// the count into the header.
type binaryWriter struct {
	f   *os.File
	buf *bufio.Writer
	n   uint64
	rec [32]byte
}

func newBinaryWriter(f *os.File, kind uint16) (*binaryWriter, error) {
	var h [binaryHeaderLen]byte
	copy(h[:], binaryMagic)
	binary.LittleEndian.PutUint16(h[8:], binaryVersion)
	binary.LittleEndian.PutUint16(h[10:], kind)
	w := &binaryWriter{f: f, buf: bufio.NewWriterSize(f, 1<<20)}
	_, err := w.buf.Write(h[:])
	return w, err
}

func (w *binaryWriter) write(rows any) error {
	le := binary.LittleEndian
	switch r := rows.(type) {
	case []Vertex:
		for _, v := range r {
			le.PutUint64(w.rec[0:], v.ID)
			le.PutUint64(w.rec[8:], v.Degree)
			le.PutUint64(w.rec[16:], v.Triangles)
			le.PutUint64(w.rec[24:], math.Float64bits(v.Clustering))
			if _, err := w.buf.Write(w.rec[:32]); err != nil {
				return err
			}
		}
		w.n += uint64(len(r))
	case []Edge:
		for _, e := range r {
			le.PutUint64(w.rec[0:], e.U)
			le.PutUint64(w.rec[8:], e.V)
			le.PutUint64(w.rec[16:], e.Support)
			if _, err := w.buf.Write(w.rec[:24]); err != nil {
				return err
			}
		}
		w.n += uint64(len(r))
	default:
		return fmt.Errorf("binary: rows of type %T", rows)
	}
	return nil
}

func (w *binaryWriter) close() error {
	if err := w.buf.Flush(); err != nil {
		return err
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], w.n)
	_, err := w.f.WriteAt(n[:], 16)
	return err
}

// parquetRowGroup is the rows per Parquet row group: large enough for
// column statistics and compression to pay, small enough that the
// writer's buffers stay far below the counts themselves.
const parquetRowGroup = 1 << 20

type parquetWriter struct {
	vw *parquet.GenericWriter[Vertex]
	ew *parquet.GenericWriter[Edge]
}

func newParquetWriter(f *os.File, kind uint16) *parquetWriter {
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(parquetRowGroup)}
	if kind == BinaryVertices {
		return &parquetWriter{vw: parquet.NewGenericWriter[Vertex](f, opts...)}
	}
	return &parquetWriter{ew: parquet.NewGenericWriter[Edge](f, opts...)}
}

func (p *parquetWriter) write(rows any) error {
	var err error
	switch r := rows.(type) {
	case []Vertex:
		_, err = p.vw.Write(r)
	case []Edge:
		_, err = p.ew.Write(r)
	default:
		err = fmt.Errorf("parquet: rows of type %T", rows)
	}
	return err
}

func (p *parquetWriter) close() error {
	if p.vw != nil {
		return p.vw.Close()
	}
	return p.ew.Close()
}
