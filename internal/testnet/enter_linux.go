//go:build linux

package testnet

import (
	"fmt"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

func enterSupported() error { return nil }

// enterAndDo runs f on an OS thread that has entered n's network
// namespace: the sockets f makes belong to it and work from any goroutine
// afterwards. The thread is never handed back to the Go scheduler: its
// goroutine exits still locked, which ends the thread, so no other
// goroutine ever runs in the namespace.
func (n *Node) enterAndDo(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := unix.Open(filepath.Join(netnsDir, n.NS), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open namespace %s: %w", n.NS, err)
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("enter namespace %s: %w", n.NS, err)
			return
		}
		errc <- f()
	}()
	return <-errc
}
