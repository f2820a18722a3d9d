//go:build unix

package coordinator

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process has used; 0
// when the system does not say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
