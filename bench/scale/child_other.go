//go:build !linux

package scale

import "syscall"

// childAttr puts a child in its own process group; without Linux's
// parent-death signal, a bench killed outright leaves its children to end
// on their own (the workers when the coordinator is gone).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
