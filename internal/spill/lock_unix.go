//go:build unix

package spill

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting. With keep false
// the lock is released again at once (a probe).
func lockFile(f *os.File, keep bool) error {
	fd := int(f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return err
	}
	if !keep {
		return syscall.Flock(fd, syscall.LOCK_UN)
	}
	return nil
}

// processAlive reports whether a process with pid exists (signal 0).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
