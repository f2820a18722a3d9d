package counts

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// ReadBinary reads counts files written in trigrid's binary format back
// into Counts: the per-vertex file (ascending id, as WriteVertices writes
// it) into memory, and, when edgesPath is not "", the per-edge file as
// the Counts' Edges, read from disk on every pass. Degrees come from the
// per-vertex file. Every header, record count and edge end is checked; an
// error names the file and what is wrong.
func ReadBinary(verticesPath, edgesPath string) (*Counts, error) {
	f, err := os.Open(verticesPath)
	if err != nil {
		return nil, fmt.Errorf("counts: %w", err)
	}
	defer f.Close()
	n, err := readBinaryHeader(f, verticesPath, BinaryVertices, 32)
	if err != nil {
		return nil, err
	}
	c := &Counts{OrigID: make([]uint64, n), Triangles: make([]uint64, n), Degree: make([]uint32, n)}
	r := bufio.NewReaderSize(f, 1<<20)
	var rec [32]byte
	le := binary.LittleEndian
	for x := range n {
		if _, err := io.ReadFull(r, rec[:]); err != nil {
			return nil, fmt.Errorf("counts: %s: record %d of %d: %w", verticesPath, x, n, err)
		}
		d := le.Uint64(rec[8:])
		if d > math.MaxUint32 {
			return nil, fmt.Errorf("counts: %s: record %d: degree %d out of range", verticesPath, x, d)
		}
		c.OrigID[x], c.Degree[x], c.Triangles[x] = le.Uint64(rec[0:]), uint32(d), le.Uint64(rec[16:])
		if x > 0 && c.OrigID[x] <= c.OrigID[x-1] {
			return nil, fmt.Errorf("counts: %s: record %d: id %d after %d (ids must ascend)", verticesPath, x, c.OrigID[x], c.OrigID[x-1])
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("counts: %s: bytes after its %d records", verticesPath, n)
	}
	if edgesPath == "" {
		return c, nil
	}
	c.PerEdge = true
	var edgeErr error
	c.EdgeErr = func() error { return edgeErr }
	c.Edges = func(yield func([2]uint32, uint64) bool) {
		edgeErr = nil
		f, err := os.Open(edgesPath)
		if err != nil {
			edgeErr = fmt.Errorf("counts: %w", err)
			return
		}
		defer f.Close()
		m, err := readBinaryHeader(f, edgesPath, BinaryEdges, 24)
		if err != nil {
			edgeErr = err
			return
		}
		r := bufio.NewReaderSize(f, 1<<20)
		var rec [24]byte
		rank := func(id uint64) (uint32, bool) {
			x, ok := slices.BinarySearch(c.OrigID, id)
			return uint32(x), ok
		}
		for q := range m {
			if _, err := io.ReadFull(r, rec[:]); err != nil {
				edgeErr = fmt.Errorf("counts: %s: record %d of %d: %w", edgesPath, q, m, err)
				return
			}
			u, v := le.Uint64(rec[0:]), le.Uint64(rec[8:])
			ru, oku := rank(u)
			rv, okv := rank(v)
			if !oku || !okv || u == v {
				edgeErr = fmt.Errorf("counts: %s: record %d: edge %d-%d is not between two vertices of %s", edgesPath, q, u, v, verticesPath)
				return
			}
			if !yield([2]uint32{ru, rv}, le.Uint64(rec[16:])) {
				return
			}
		}
		if _, err := r.ReadByte(); err != io.EOF {
			edgeErr = fmt.Errorf("counts: %s: bytes after its %d records", edgesPath, m)
		}
	}
	return c, nil
}

// readBinaryHeader checks a binary counts file's header (magic, version,
// kind) and that its size holds exactly the records it declares.
func readBinaryHeader(f *os.File, path string, kind uint16, recLen int64) (int64, error) {
	var h [binaryHeaderLen]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, fmt.Errorf("counts: %s: shorter than the %d-byte header", path, binaryHeaderLen)
		}
		return 0, fmt.Errorf("counts: %s: %w", path, err)
	}
	le := binary.LittleEndian
	switch {
	case string(h[:8]) != binaryMagic:
		return 0, fmt.Errorf("counts: %s: not a trigrid counts file (magic %q)", path, h[:8])
	case le.Uint16(h[8:]) != binaryVersion:
		return 0, fmt.Errorf("counts: %s: version %d, want %d", path, le.Uint16(h[8:]), binaryVersion)
	case le.Uint16(h[10:]) != kind:
		return 0, fmt.Errorf("counts: %s: record kind %d, want %d", path, le.Uint16(h[10:]), kind)
	}
	n := le.Uint64(h[16:])
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("counts: %s: %w", path, err)
	}
	if body := st.Size() - binaryHeaderLen; n > math.MaxInt64/uint64(recLen) || int64(n)*recLen != body {
		return 0, fmt.Errorf("counts: %s: header says %d records of %d bytes, the file holds %d bytes after it", path, n, recLen, body)
	}
	return int64(n), nil
}
