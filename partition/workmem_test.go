package partition

import (
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
