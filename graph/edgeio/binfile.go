package edgeio

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/trigrid/trigrid/graph"
	"github.com/trigrid/trigrid/internal/hugepage"
)

// binSegment is the number of edges one positioned read covers: large
// enough to amortise the system call, small enough to balance the workers.
const binSegment = 1 << 19

// readBinaryFile reads an uncompressed binary edge list whose size matches
// its header with parallel positioned reads straight into the result. The
// streaming reader decodes on one goroutine and grows its result by
// appending, which made reading the slowest phase of a GPU count. ok is
// false when path is not such a file; the caller then streams it, which
// also gives every error message for malformed files.
func readBinaryFile(ctx context.Context, path string, opts ReadOptions) (edges []graph.Edge, st ReadStats, ok bool, err error) {
	f, h, ok := openBinaryFile(path, opts)
	if !ok {
		return nil, st, false, nil
	}
	defer f.Close()
	st = ReadStats{Path: path, Format: FormatBin, Bytes: h.size, Edges: int64(h.m)}
	edges = make([]graph.Edge, h.m)
	err = readSegments(ctx, f, path, h, opts, func(lo, hi uint64, b []byte) {
		decodePairs(edges[lo:hi], b, h.width)
	})
	if err != nil {
		return nil, st, true, err
	}
	return edges, st, true, nil
}

// ReadBinaryPairs32 reads an uncompressed binary edge list of 32-bit ids
// (its header says width 4 and its size matches) straight into pairs, u
// then v for each edge in file order, with parallel positioned reads: half
// the memory of ReadFile's edges and no decoding on little-endian hosts.
// ok is false, with no error, when path is not such a file (standard
// input, another format, 64-bit ids, compression, a size that does not
// match its header); the caller then reads it with ReadFile, which also
// gives every error message for malformed files.
func ReadBinaryPairs32(ctx context.Context, path string, opts ReadOptions) (pairs []uint32, st ReadStats, ok bool, err error) {
	f, h, ok := openBinaryFile(path, opts)
	if !ok || h.width != 4 {
		if f != nil {
			f.Close()
		}
		return nil, st, false, nil
	}
	defer f.Close()
	st = ReadStats{Path: path, Format: FormatBin, Bytes: h.size, Edges: int64(h.m)}
	pairs = make([]uint32, 2*h.m)
	hugepage.Advise(pairs) // written once here, maybe page-locked for a device
	native := nativeLittleEndian()
	watch := opts.Pairs32
	if watch != nil {
		watch.Begin(pairs)
	}
	err = readSegments(ctx, f, path, h, opts, func(lo, hi uint64, b []byte) {
		dst := pairs[2*lo : 2*hi]
		if !native {
			for j := range dst {
				dst[j] = binary.LittleEndian.Uint32(b[4*j:])
			}
		}
		if watch != nil {
			watch.Filled(int(2*lo), int(2*hi))
		}
	}, func(lo, hi uint64) []byte {
		if !native {
			return nil
		}
		return unsafe.Slice((*byte)(unsafe.Pointer(&pairs[2*lo])), 8*(hi-lo))
	})
	if err != nil {
		return nil, st, true, err
	}
	return pairs, st, true, nil
}

// PairsWatcher sees a 32-bit binary edge list's pairs as a parallel read
// fills them (ReadOptions.Pairs32).
type PairsWatcher interface {
	// Begin is called once with the whole result, before anything is read
	// into it.
	Begin(pairs []uint32)
	// Filled says that pairs[lo:hi] (words, whole pairs) are read and
	// final. It is called from the reading goroutines, concurrently and in
	// any order, once for each word, and must not block for long. A read
	// that fails stops calling it: the caller learns of the failure from
	// the read's error.
	Filled(lo, hi int)
}

func nativeLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// binFileHeader is what openBinaryFile read of a binary edge list's header.
type binFileHeader struct {
	width uint64 // bytes per id
	m     uint64 // edges
	size  int64  // file bytes
	watch *fileWatch
}

// openBinaryFile opens path when it is an uncompressed binary edge list
// whose size matches its header; ok is false otherwise (and nothing is
// left open).
func openBinaryFile(path string, opts ReadOptions) (*os.File, binFileHeader, bool) {
	if path == "-" || (opts.Format != FormatAuto && opts.Format != FormatBin) || !isRegular(path) {
		return nil, binFileHeader{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, binFileHeader{}, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, binFileHeader{}, false
	}
	var hb [binHeaderSize]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil || [8]byte(hb[:8]) != binMagic {
		f.Close()
		return nil, binFileHeader{}, false
	}
	version := binary.LittleEndian.Uint32(hb[8:])
	width := uint64(binary.LittleEndian.Uint32(hb[12:]))
	m := binary.LittleEndian.Uint64(hb[16:])
	pair := 2 * width
	if version != binVersion || (width != 4 && width != 8) || m > uint64(fi.Size())/pair ||
		uint64(fi.Size()) != binHeaderSize+m*pair {
		f.Close()
		return nil, binFileHeader{}, false
	}
	return f, binFileHeader{width: width, m: m, size: fi.Size(), watch: watchFile(f, fi)}, true
}

// readSegments reads the edges of f in segments of binSegment edges on
// opts.Workers goroutines and hands each segment's bytes to decode (edges
// lo to hi). into, when given and returning a non-nil slice, names where a
// segment's bytes are read to (the caller's own memory); otherwise each
// goroutine reads into a buffer of its own.
func readSegments(ctx context.Context, f *os.File, path string, h binFileHeader, opts ReadOptions,
	decode func(lo, hi uint64, b []byte), into ...func(lo, hi uint64) []byte) error {
	m, pair := h.m, 2*h.width
	if opts.midRead != nil {
		opts.midRead()
	}
	w := opts.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	segments := (m + binSegment - 1) / binSegment
	var next, done atomic.Uint64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(uint64(w), max(segments, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				s := next.Add(1) - 1
				if s >= segments || ctx.Err() != nil {
					return
				}
				lo := s * binSegment
				hi := min(m, lo+binSegment)
				var b []byte
				if len(into) > 0 {
					b = into[0](lo, hi)
				}
				if b == nil {
					if buf == nil {
						buf = make([]byte, binSegment*pair)
					}
					b = buf[:(hi-lo)*pair]
				}
				if _, err := f.ReadAt(b, int64(binHeaderSize+lo*pair)); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("graph/edgeio: %s: reading: %w", path, err) })
					next.Store(segments)
					return
				}
				decode(lo, hi, b)
				done.Add(hi - lo)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if opts.Progress != nil {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-finished:
				break wait
			case <-tick.C:
				opts.Progress(binHeaderSize+int64(done.Load()*pair), h.size)
			}
		}
		opts.Progress(h.size, h.size)
	}
	<-finished
	if ctx.Err() == nil && h.watch.changed() {
		return changedError(path)
	}
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func decodePairs(e []graph.Edge, b []byte, width uint64) {
	if width == 4 {
		for j := range e {
			e[j] = graph.Edge{U: uint64(binary.LittleEndian.Uint32(b[8*j:])), V: uint64(binary.LittleEndian.Uint32(b[8*j+4:]))}
		}
		return
	}
	for j := range e {
		e[j] = graph.Edge{U: binary.LittleEndian.Uint64(b[16*j:]), V: binary.LittleEndian.Uint64(b[16*j+8:])}
	}
}
