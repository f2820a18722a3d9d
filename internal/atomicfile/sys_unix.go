//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

var errWouldBlock = syscall.EWOULDBLOCK

// lockFile takes an exclusive flock on f without waiting: flock locks an
// open file description, so two opens conflict even in one process.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// processAlive reports whether a process with pid exists (signal 0).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// keepOwner gives f the owner and group of old where this process may:
// the group alone when it may not change the owner; otherwise it leaves
// them.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	cur, err := f.Stat()
	if err != nil {
		return
	}
	if ns, ok := cur.Sys().(*syscall.Stat_t); ok && ns.Uid == st.Uid && ns.Gid == st.Gid {
		return
	}
	if f.Chown(int(st.Uid), int(st.Gid)) != nil {
		f.Chown(-1, int(st.Gid))
	}
}

// SameDevice reports whether two files lie on one filesystem, so that a
// rename can move one onto the other's path; true when it cannot tell.
func SameDevice(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return !ok1 || !ok2 || sa.Dev == sb.Dev
}
