package partition

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// runSet is a set of spill files, each holding one zstd frame per bucket of
// the buffer it was spilled from. Pass k+1 reads bucket b back as the
// concatenation of b's frames from every spill, so the spill format needs
// no merge step: buckets are chosen so one fits in memory.
type runSet struct {
	dir     string
	name    string
	buckets int
	files   []*os.File
	// segs[b] lists (file, offset, length) of bucket b's frames.
	segs  [][]runSeg
	count []int64 // elements per bucket
	enc   *zstd.Encoder
	dec   *zstd.Decoder
	mu    sync.Mutex
}

type runSeg struct {
	file     int
	off, len int64
}

func newRunSet(dir, name string, buckets int) (*runSet, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, fmt.Errorf("partition: zstd: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, fmt.Errorf("partition: zstd: %w", err)
	}
	return &runSet{dir: dir, name: name, buckets: buckets, segs: make([][]runSeg, buckets), count: make([]int64, buckets), enc: enc, dec: dec}, nil
}

// spill writes one buffer of uint64 elements already grouped by bucket:
// bucket b is data[start[b]:start[b+1]].
func (r *runSet) spill(data []uint64, start []int) error {
	return r.write(func(put func(b int, seg []uint64) error) error {
		for b := 0; b < r.buckets; b++ {
			if err := put(b, data[start[b]:start[b+1]]); err != nil {
				return err
			}
		}
		return nil
	})
}

// spillBucket writes data as frames of bucket b.
func (r *runSet) spillBucket(b int, data []uint64) error {
	return r.write(func(put func(b int, seg []uint64) error) error { return put(b, data) })
}

// write opens a new spill file and lets fill store bucket segments in it.
func (r *runSet) write(fill func(put func(b int, seg []uint64) error) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.Create(filepath.Join(r.dir, fmt.Sprintf("%s-%05d.run", r.name, len(r.files))))
	if err != nil {
		return fmt.Errorf("partition: spill: %w", err)
	}
	r.files = append(r.files, f)
	fi := len(r.files) - 1
	var off int64
	raw := make([]byte, 0, 8<<17)
	var out []byte
	put := func(b int, seg []uint64) error {
		// Frames of at most 128Ki elements bound the byte buffers.
		for len(seg) > 0 {
			k := min(len(seg), 1<<17)
			raw = raw[:0]
			for _, x := range seg[:k] {
				raw = binary.LittleEndian.AppendUint64(raw, x)
			}
			out = r.enc.EncodeAll(raw, out[:0])
			if _, err := f.Write(out); err != nil {
				return fmt.Errorf("partition: spill %s: %w", f.Name(), err)
			}
			r.segs[b] = append(r.segs[b], runSeg{file: fi, off: off, len: int64(len(out))})
			r.count[b] += int64(k)
			off += int64(len(out))
			seg = seg[k:]
		}
		return nil
	}
	return fill(put)
}

// load appends bucket b's elements to dst.
func (r *runSet) load(b int, dst []uint64) ([]uint64, error) {
	var buf, raw []byte
	for _, s := range r.segs[b] {
		if int64(cap(buf)) < s.len {
			buf = make([]byte, s.len)
		}
		buf = buf[:s.len]
		if _, err := r.files[s.file].ReadAt(buf, s.off); err != nil {
			return nil, fmt.Errorf("partition: read run %s: %w", r.files[s.file].Name(), err)
		}
		var err error
		raw, err = r.dec.DecodeAll(buf, raw[:0])
		if err != nil {
			return nil, fmt.Errorf("partition: run %s: %w", r.files[s.file].Name(), err)
		}
		for k := 0; k+8 <= len(raw); k += 8 {
			dst = append(dst, binary.LittleEndian.Uint64(raw[k:]))
		}
	}
	return dst, nil
}

// close removes the spill files.
func (r *runSet) close() {
	if r.enc == nil {
		return
	}
	for _, f := range r.files {
		f.Close()
		os.Remove(f.Name())
	}
	r.files = nil
	r.enc.Close()
	r.dec.Close()
	r.enc, r.dec = nil, nil
}
