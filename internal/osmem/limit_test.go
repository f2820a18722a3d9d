package osmem

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestLimitFollowsGOMEMLIMIT(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err == nil {
		if b, src := Limit(); b == 0 || src == "" {
			t.Fatalf("Limit() = %d, %q with /proc/meminfo present", b, src)
		}
	}
	old := debug.SetMemoryLimit(1 << 20)
	defer debug.SetMemoryLimit(old)
	if b, src := Limit(); b != 1<<20 || src != "memory limit (GOMEMLIMIT)" {
		t.Fatalf("with GOMEMLIMIT 1 MiB: %d, %q", b, src)
	}
}
