package partition

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/storage"
)

// TestWorkMemDefault: a large memory limit raises the ceiling only; the
// spill buffers and buckets stay those of DefaultWorkMem, the size that
// partitions fastest, instead of growing with the limit.
func TestWorkMemDefault(t *testing.T) {
	const est = 128 << 20 // rmat scale 22 as a binary file: 512 MiB / 4
	fast := Config{Scheme: storage.SchemeHash, P: 4, Workers: 2, MemLimit: DefaultWorkMem}
	if err := fast.check(); err != nil {
		t.Fatal(err)
	}
	wantPairs, wantBuckets := spillSizes(est, fast.WorkMem, fast.Workers)
	for _, limit := range []int64{2 << 30, 12 << 30, 1 << 40} {
		cfg := Config{Scheme: storage.SchemeHash, P: 4, Workers: 2, MemLimit: limit}
		if err := cfg.check(); err != nil {
			t.Fatal(err)
		}
		if cfg.WorkMem != DefaultWorkMem {
			t.Fatalf("limit %d: work memory %d, want %d", limit, cfg.WorkMem, DefaultWorkMem)
		}
		if p, b := spillSizes(est, cfg.WorkMem, cfg.Workers); p != wantPairs || b != wantBuckets {
			t.Fatalf("limit %d: %d pairs per buffer, %d buckets; want %d, %d", limit, p, b, wantPairs, wantBuckets)
		}
	}
	// Below the default, the limit itself bounds the buffers.
	small := Config{Scheme: storage.SchemeHash, P: 4, MemLimit: 256 << 20}
	if err := small.check(); err != nil || small.WorkMem != 256<<20 {
		t.Fatalf("256 MiB limit: work memory %d, %v", small.WorkMem, err)
	}
	if p, _ := spillSizes(est, small.WorkMem, 2); int64(p)*16*4 > small.MemLimit/2 {
		t.Fatalf("256 MiB limit: four pass 1 buffers of %d pairs exceed half the limit", p)
	}
}

// TestDefaultMemLimit: small uncompressed inputs are split in memory, the
// fastest path for them; large, compressed and unsized ones stream.
func TestDefaultMemLimit(t *testing.T) {
	dir := t.TempDir()
	sized := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const host = 24 << 30
	tests := []struct {
		path string
		want int64
	}{
		{sized("r20.bin", 134217752), 0},              // 16.7M edges: in memory
		{sized("r22.bin", 536870936), host / 2},       // 67M edges: stream
		{sized("r20.txt", 233<<20), host / 2},         // text: up to 61M edges
		{sized("small.txt", 10<<20), 0},               // up to 2.6M edges
		{sized("small.txt.gz", 1<<20), host / 2},      // compressed: unbounded
		{"-", host / 2},                               // standard input
		{filepath.Join(dir, "missing.bin"), host / 2}, // the read reports it
	}
	for _, tc := range tests {
		if got := DefaultMemLimit(tc.path, host); got != tc.want {
			t.Errorf("%s: %d, want %d", filepath.Base(tc.path), got, tc.want)
		}
	}
	// A small machine keeps the in-memory peak to an eighth of it.
	if got := DefaultMemLimit(filepath.Join(dir, "r20.bin"), 4<<30); got != 2<<30 {
		t.Errorf("4 GiB machine: %d, want a streaming limit of 2 GiB", got)
	}
	if got := DefaultMemLimit("-", 0); got != unknownHostMemory/2 {
		t.Errorf("unknown machine memory: %d", got)
	}
}
