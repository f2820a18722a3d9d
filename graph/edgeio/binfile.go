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

	"github.com/trigrid/trigrid/graph"
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
	if path == "-" || (opts.Format != FormatAuto && opts.Format != FormatBin) {
		return nil, st, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, st, false, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, st, false, nil
	}
	var hb [binHeaderSize]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil || [8]byte(hb[:8]) != binMagic {
		return nil, st, false, nil
	}
	version := binary.LittleEndian.Uint32(hb[8:])
	width := uint64(binary.LittleEndian.Uint32(hb[12:]))
	m := binary.LittleEndian.Uint64(hb[16:])
	pair := 2 * width
	if version != binVersion || (width != 4 && width != 8) || m > uint64(fi.Size())/pair ||
		uint64(fi.Size()) != binHeaderSize+m*pair {
		return nil, st, false, nil
	}
	st = ReadStats{Path: path, Format: FormatBin, Bytes: fi.Size(), Edges: int64(m)}
	edges = make([]graph.Edge, m)
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
			buf := make([]byte, binSegment*pair)
			for {
				s := next.Add(1) - 1
				if s >= segments || ctx.Err() != nil {
					return
				}
				lo := s * binSegment
				hi := min(m, lo+binSegment)
				b := buf[:(hi-lo)*pair]
				if _, err := f.ReadAt(b, int64(binHeaderSize+lo*pair)); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("graph/edgeio: %s: reading: %w", path, err) })
					next.Store(segments)
					return
				}
				decodePairs(edges[lo:hi], b, width)
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
				opts.Progress(binHeaderSize+int64(done.Load()*pair), fi.Size())
			}
		}
		opts.Progress(fi.Size(), fi.Size())
	}
	<-finished
	if firstErr != nil {
		return nil, st, true, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, st, true, err
	}
	return edges, st, true, nil
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
