package osmem

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestAvailableFollowsGOMEMLIMIT(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err == nil {
		total := meminfo("MemTotal:")
		a, asrc := Available()
		if a == 0 || asrc == "" || a > total {
			t.Fatalf("Available() = %d, %q with /proc/meminfo present (total %d)", a, asrc, total)
		}
	}
	old := debug.SetMemoryLimit(1 << 20)
	defer debug.SetMemoryLimit(old)
	if b, src := Available(); b != 1<<20 || src != "memory limit (GOMEMLIMIT)" {
		t.Fatalf("with GOMEMLIMIT 1 MiB: %d, %q", b, src)
	}
}
