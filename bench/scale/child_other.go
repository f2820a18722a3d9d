//go:build !linux

package scale

import (
	"syscall"
	"time"
)

// childAttr puts a child in its own process group; without Linux's
// parent-death signal, a bench killed outright leaves its children to end
// on their own (the workers when the coordinator is gone).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// procCPU and hostBusy read /proc on Linux; elsewhere the bench reports
// no CPU shares.
func procCPU(int) (time.Duration, bool) { return 0, false }

func hostBusy() (time.Duration, bool) { return 0, false }
