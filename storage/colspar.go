package storage

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"sort"
	"sync"
)

// The column varints of one block decode on several cores: every byte
// below 0x80 ends a varint, so counting them over equal byte ranges (a
// popcount a word) tells where each range's first whole value begins, and
// the part of a range from its first row start on decodes on its own
// goroutine, rows [r_t, r_t+1) from that row's first byte. The parts tile
// the bytes and the rows exactly, and each decodes its bytes as the
// serial decoder would from a value's start, so parts that all succeed
// give the serial decoder's columns; any part's error (or a part that
// does not end where the next begins) runs the serial decoder for its
// error. A block decodes in parallel from parallelEdges edges on, in at
// most GOMAXPROCS parts of at least partEdges edges each: a loader whose
// block the device waits for gets the idle cores, and loaders that keep
// every core busy lose only the count of the bytes.

const (
	parallelEdges = 1 << 20
	partEdges     = 1 << 18
)

// decodeColsPar is decodeCols over up to GOMAXPROCS goroutines.
func decodeColsPar(name string, raw []byte, offs []uint64, cols []uint32, ncols uint64) error {
	if len(cols) < parallelEdges {
		return decodeCols(name, raw, offs, cols, ncols)
	}
	return decodeColsParts(name, raw, offs, cols, ncols, min(runtime.GOMAXPROCS(0), len(cols)/partEdges))
}

// decodeColsParts is decodeCols in up to parts parts.
func decodeColsParts(name string, raw []byte, offs []uint64, cols []uint32, ncols uint64, parts int) error {
	if parts < 2 || len(raw) < 8*parts {
		return decodeCols(name, raw, offs, cols, ncols)
	}
	rows, starts, ok := splitCols(raw, offs, parts)
	if !ok {
		return decodeCols(name, raw, offs, cols, ncols)
	}
	fail := make([]bool, len(rows)-1)
	var wg sync.WaitGroup
	for t := range len(rows) - 1 {
		wg.Go(func() {
			p, err := decodeRows(name, raw, starts[t], offs, rows[t], rows[t+1], cols, ncols)
			fail[t] = err != nil || p != starts[t+1]
		})
	}
	wg.Wait()
	for _, f := range fail {
		if f {
			return decodeCols(name, raw, offs, cols, ncols) // for its error
		}
	}
	return nil
}

// splitCols cuts the rows into up to parts runs of about equal bytes:
// rows[t] is the first row of run t and starts[t] its first byte, with
// rows[last] = the number of rows and starts[last] = len(raw). It says
// false when the varints cannot be what offs declares (too few values).
func splitCols(raw []byte, offs []uint64, parts int) (rows, starts []int, ok bool) {
	n := len(raw)
	ends := make([]uint64, parts+1) // values ended before byte t*n/parts
	var wg sync.WaitGroup
	for t := range parts {
		wg.Go(func() { ends[t+1] = countEnds(raw[t*n/parts : (t+1)*n/parts]) })
	}
	wg.Wait()
	for t := range parts {
		ends[t+1] += ends[t]
	}
	nrows := len(offs) - 1
	if ends[parts] != offs[nrows] {
		return nil, nil, false
	}
	rows, starts = []int{0}, []int{0}
	for t := 1; t < parts; t++ {
		b := t * n / parts
		// v0 is the first value that begins at or after byte b: the one
		// ending first after it, unless a value is in progress at b.
		v0, inside := ends[t], raw[b-1] >= 0x80
		if inside {
			v0++
		}
		r := sort.Search(nrows, func(r int) bool { return offs[r] >= v0 })
		for r < nrows && offs[r] == offs[r+1] {
			r++ // an empty row is no start
		}
		if r <= rows[len(rows)-1] || r >= nrows {
			continue
		}
		p := valueStart(raw, b, inside, offs[r]-v0)
		if p < 0 {
			return nil, nil, false
		}
		rows = append(rows, r)
		starts = append(starts, p)
	}
	return append(rows, nrows), append(starts, n), true
}

// countEnds counts the bytes below 0x80 of b: the varints ending in b.
func countEnds(b []byte) uint64 {
	var c int
	for len(b) >= 8 {
		c += bits.OnesCount64(^binary.LittleEndian.Uint64(b) & 0x8080808080808080)
		b = b[8:]
	}
	for _, x := range b {
		if x < 0x80 {
			c++
		}
	}
	return uint64(c)
}

// valueStart is the first byte of the value k values after the first to
// begin at or after byte b (inside: a value is in progress at b, and ends
// first), or -1 past the end of raw.
func valueStart(raw []byte, b int, inside bool, k uint64) int {
	p := b
	if inside {
		k++
	}
	for ; k > 0; k-- {
		for p < len(raw) && raw[p] >= 0x80 {
			p++
		}
		if p >= len(raw) {
			return -1
		}
		p++ // past the value's last byte
	}
	return p
}
