package partition

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// runSet is one spill file holding frames of uint64 elements, each frame
// tagged with the bucket it belongs to. Pass k+1 reads bucket b back as the
// concatenation of b's frames, so the spill format needs no merge step:
// buckets are chosen so one fits in memory. Frames are encoded and
// compressed by the spilling goroutines in parallel; only reserving file
// space takes the lock, and the write itself is a positioned write.
type runSet struct {
	name    string
	buckets int
	codec   runCodec
	f       *os.File
	enc     *zstd.Encoder
	dec     *zstd.Decoder

	mu    sync.Mutex
	size  int64
	segs  [][]runSeg // segs[b] lists bucket b's frames
	count []int64    // elements per bucket
}

type runSeg struct {
	off, len int64
	n        int // elements
}

// runCodec is how a frame's elements become bytes before zstd. Varints
// shrink compact ids to 1-4 bytes, and gaps of sorted keys to 1-2, which
// leaves zstd (at its fastest level) far less to do.
type runCodec uint8

const (
	// codecVarint: each element as a uvarint (original ids).
	codecVarint runCodec = iota
	// codecDelta: ascending elements as uvarint gaps from the previous one.
	codecDelta
	// codecHiLo: high and low 32 bits as two uvarints (row<<32|col keys).
	codecHiLo
)

// frameElems bounds a frame so encode buffers stay small (~1 MiB).
const frameElems = 1 << 17

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, frameElems*10); return &b }}

func newRunSet(dir, name string, buckets int, codec runCodec, workers int) (*runSet, error) {
	workers = clampWorkers(workers)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(workers),
		zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(1<<20))
	if err != nil {
		return nil, fmt.Errorf("partition: zstd: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(workers), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, fmt.Errorf("partition: zstd: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, name+".run"))
	if err != nil {
		enc.Close()
		dec.Close()
		return nil, fmt.Errorf("partition: spill: %w", err)
	}
	return &runSet{name: name, buckets: buckets, codec: codec, f: f, enc: enc, dec: dec,
		segs: make([][]runSeg, buckets), count: make([]int64, buckets)}, nil
}

// put appends data as frames of bucket b. Safe for concurrent use.
func (r *runSet) put(b int, data []uint64) error {
	rawp, outp := framePool.Get().(*[]byte), framePool.Get().(*[]byte)
	defer framePool.Put(rawp)
	defer framePool.Put(outp)
	for len(data) > 0 {
		k := min(len(data), frameElems)
		raw := r.codec.encode((*rawp)[:0], data[:k])
		out := r.enc.EncodeAll(raw, (*outp)[:0])
		*rawp, *outp = raw, out
		r.mu.Lock()
		off := r.size
		r.size += int64(len(out))
		r.segs[b] = append(r.segs[b], runSeg{off: off, len: int64(len(out)), n: k})
		r.count[b] += int64(k)
		r.mu.Unlock()
		if _, err := r.f.WriteAt(out, off); err != nil {
			return fmt.Errorf("partition: spill %s: %w", r.f.Name(), err)
		}
		data = data[k:]
	}
	return nil
}

// load appends bucket b's elements to dst. Safe for concurrent use once
// spilling is over.
func (r *runSet) load(b int, dst []uint64) ([]uint64, error) {
	if need := len(dst) + int(r.count[b]); cap(dst) < need {
		dst = append(make([]uint64, 0, need), dst...)
	}
	bufp, rawp := framePool.Get().(*[]byte), framePool.Get().(*[]byte)
	defer framePool.Put(bufp)
	defer framePool.Put(rawp)
	for _, s := range r.segs[b] {
		buf := *bufp
		if int64(cap(buf)) < s.len {
			buf = make([]byte, s.len)
		}
		buf = buf[:s.len]
		*bufp = buf
		if _, err := r.f.ReadAt(buf, s.off); err != nil {
			return nil, fmt.Errorf("partition: read run %s: %w", r.f.Name(), err)
		}
		raw, err := r.dec.DecodeAll(buf, (*rawp)[:0])
		if err != nil {
			return nil, fmt.Errorf("partition: run %s: %w", r.f.Name(), err)
		}
		*rawp = raw
		if dst, err = r.codec.decode(dst, raw, s.n); err != nil {
			return nil, fmt.Errorf("partition: run %s: %w", r.f.Name(), err)
		}
	}
	return dst, nil
}

func (c runCodec) encode(dst []byte, data []uint64) []byte {
	switch c {
	case codecDelta:
		var prev uint64
		for _, x := range data {
			dst = binary.AppendUvarint(dst, x-prev)
			prev = x
		}
	case codecHiLo:
		for _, x := range data {
			dst = binary.AppendUvarint(dst, x>>32)
			dst = binary.AppendUvarint(dst, uint64(uint32(x)))
		}
	default:
		for _, x := range data {
			dst = binary.AppendUvarint(dst, x)
		}
	}
	return dst
}

// decode appends the n elements of one frame to dst.
func (c runCodec) decode(dst []uint64, raw []byte, n int) ([]uint64, error) {
	bad := fmt.Errorf("corrupt %d-element frame", n)
	switch c {
	case codecDelta:
		var prev uint64
		for range n {
			x, k := binary.Uvarint(raw)
			if k <= 0 {
				return nil, bad
			}
			raw = raw[k:]
			prev += x
			dst = append(dst, prev)
		}
	case codecHiLo:
		for range n {
			hi, k := binary.Uvarint(raw)
			if k <= 0 {
				return nil, bad
			}
			raw = raw[k:]
			lo, k := binary.Uvarint(raw)
			if k <= 0 || lo > 1<<32-1 {
				return nil, bad
			}
			raw = raw[k:]
			dst = append(dst, hi<<32|lo)
		}
	default:
		for range n {
			x, k := binary.Uvarint(raw)
			if k <= 0 {
				return nil, bad
			}
			raw = raw[k:]
			dst = append(dst, x)
		}
	}
	if len(raw) != 0 {
		return nil, fmt.Errorf("%d bytes after a %d-element frame", len(raw), n)
	}
	return dst, nil
}

// close removes the spill file.
func (r *runSet) close() {
	if r.enc == nil {
		return
	}
	r.f.Close()
	os.Remove(r.f.Name())
	r.enc.Close()
	r.dec.Close()
	r.enc, r.dec = nil, nil
}
