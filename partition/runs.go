package partition

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/bits"
	"os"
	"path/filepath"
	"sync"
)

// runSet is one spill file holding frames of uint64 elements, each frame
// tagged with the bucket it belongs to. Pass k+1 reads bucket b back as the
// concatenation of b's frames, so the spill format needs no merge step:
// buckets are chosen so one fits in memory. Frames are encoded by the
// spilling goroutines in parallel; only reserving file space takes the
// lock, and the write itself is a positioned write.
//
// Compression is the codec's alone: zstd after the codec saves next to
// nothing on these runs for a noticeable cost in CPU
// (docs/decisions/2026-11-21-shard-and-run-codecs.md).
type runSet struct {
	name    string
	buckets int
	codec   runCodec
	log     *slog.Logger
	f       *os.File

	mu     sync.Mutex
	size   int64
	segs   [][]runSeg // segs[b] lists bucket b's frames
	count  []int64    // elements per bucket
	frames int64
}

type runSeg struct {
	off, len int64
	n        int // elements
}

// runCodec is how a frame's elements become bytes.
type runCodec uint8

const (
	// codecFixed: one byte w, then every element in w little-endian bytes,
	// w the width of the frame's largest element. Decoding is one
	// unaligned load and a mask per element; compact ids and local
	// (row, col) keys take 3-5 bytes instead of 8.
	codecFixed runCodec = iota
	// codecDelta: ascending elements as uvarint gaps from the previous
	// one; gaps of sorted adjacency keys are mostly one or two bytes.
	codecDelta
)

// frameElems bounds a frame so encode buffers stay small (~1 MiB).
const frameElems = 1 << 17

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, frameElems*8+16); return &b }}

func newRunSet(dir, name string, buckets int, codec runCodec) (*runSet, error) {
	f, err := os.Create(filepath.Join(dir, name+".run"))
	if err != nil {
		return nil, fmt.Errorf("partition: spill: %w", err)
	}
	return &runSet{name: name, buckets: buckets, codec: codec, f: f,
		segs: make([][]runSeg, buckets), count: make([]int64, buckets)}, nil
}

// put appends data as frames of bucket b. Safe for concurrent use.
func (r *runSet) put(b int, data []uint64) error {
	outp := framePool.Get().(*[]byte)
	defer framePool.Put(outp)
	for len(data) > 0 {
		k := min(len(data), frameElems)
		out := r.codec.encode((*outp)[:0], data[:k])
		*outp = out
		r.mu.Lock()
		off := r.size
		r.size += int64(len(out))
		r.segs[b] = append(r.segs[b], runSeg{off: off, len: int64(len(out)), n: k})
		r.count[b] += int64(k)
		r.frames++
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
	bufp := framePool.Get().(*[]byte)
	defer framePool.Put(bufp)
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
		var err error
		if dst, err = r.codec.decode(dst, buf, s.n); err != nil {
			return nil, fmt.Errorf("partition: run %s: %w", r.f.Name(), err)
		}
	}
	return dst, nil
}

func (c runCodec) encode(dst []byte, data []uint64) []byte {
	if c == codecDelta {
		var prev uint64
		for _, x := range data {
			dst = binary.AppendUvarint(dst, x-prev)
			prev = x
		}
		return dst
	}
	var all uint64
	for _, x := range data {
		all |= x
	}
	w := max((bits.Len64(all)+7)/8, 1)
	dst = append(dst, byte(w))
	off := len(dst)
	// Each 8-byte store spills into the next element's bytes, which the
	// next store overwrites; 8 bytes of slack take the last one.
	end := off + w*len(data)
	if cap(dst) < end+8 {
		dst = append(make([]byte, 0, end+8), dst...)
	}
	buf := dst[:end+8]
	for _, x := range data {
		binary.LittleEndian.PutUint64(buf[off:], x)
		off += w
	}
	return buf[:end]
}

// uvarint decodes one uvarint at raw[i:], returning it and the next
// offset (or i unchanged when raw is cut short or the value overflows). One
// byte values, most gaps of sorted keys, skip the loop.
func uvarint(raw []byte, i int) (uint64, int) {
	if i < len(raw) && raw[i] < 0x80 {
		return uint64(raw[i]), i + 1
	}
	var x uint64
	for s, j := uint(0), i; j < len(raw) && s < 64; s, j = s+7, j+1 {
		b := raw[j]
		if b < 0x80 {
			return x | uint64(b)<<s, j + 1
		}
		x |= uint64(b&0x7f) << s
	}
	return 0, i
}

// decode appends the n elements of one frame to dst.
func (c runCodec) decode(dst []uint64, raw []byte, n int) ([]uint64, error) {
	if c == codecDelta {
		var prev uint64
		i := 0
		for range n {
			x, j := uvarint(raw, i)
			if j == i {
				return nil, fmt.Errorf("corrupt %d-element frame", n)
			}
			i = j
			prev += x
			dst = append(dst, prev)
		}
		if i != len(raw) {
			return nil, fmt.Errorf("%d bytes after a %d-element frame", len(raw)-i, n)
		}
		return dst, nil
	}
	if len(raw) == 0 || raw[0] < 1 || raw[0] > 8 || len(raw) != 1+n*int(raw[0]) {
		return nil, fmt.Errorf("corrupt %d-element frame of %d bytes", n, len(raw))
	}
	w := int(raw[0])
	mask := ^uint64(0) >> (64 - 8*w)
	raw = raw[1:]
	k := 0
	for ; k < n && k*w+8 <= len(raw); k++ {
		dst = append(dst, binary.LittleEndian.Uint64(raw[k*w:])&mask)
	}
	for ; k < n; k++ {
		var b [8]byte
		copy(b[:], raw[k*w:k*w+w])
		dst = append(dst, binary.LittleEndian.Uint64(b[:]))
	}
	return dst, nil
}

// close removes the spill file.
func (r *runSet) close() {
	if r.f == nil {
		return
	}
	if r.log != nil {
		var n int64
		for _, c := range r.count {
			n += c
		}
		r.log.Debug("spill runs", "name", r.name, "elements", n, "bytes", r.size, "buckets", r.buckets)
	}
	r.f.Close()
	os.Remove(r.f.Name())
	r.f = nil
}

// largest is the elements of r's largest bucket.
func (r *runSet) largest() int64 {
	var m int64
	for _, c := range r.count {
		m = max(m, c)
	}
	return m
}

// indexBytes is the memory of r's frame index.
func (r *runSet) indexBytes() int64 {
	n := 32 * int64(len(r.segs))
	for _, s := range r.segs {
		n += 24 * int64(cap(s))
	}
	return n
}

// frameBytes bounds the memory of r's frame index as frames are added
// (segBytes a frame).
func (r *runSet) frameBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return segBytes * r.frames
}
