package osmem

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestLimitFollowsGOMEMLIMIT(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err == nil {
		b, src := Limit()
		a, asrc := Available()
		if b == 0 || src == "" || a == 0 || asrc == "" || a > b {
			t.Fatalf("Limit() = %d, %q, Available() = %d, %q with /proc/meminfo present", b, src, a, asrc)
		}
	}
	old := debug.SetMemoryLimit(1 << 20)
	defer debug.SetMemoryLimit(old)
	for _, f := range []func() (uint64, string){Limit, Available} {
		if b, src := f(); b != 1<<20 || src != "memory limit (GOMEMLIMIT)" {
			t.Fatalf("with GOMEMLIMIT 1 MiB: %d, %q", b, src)
		}
	}
}
