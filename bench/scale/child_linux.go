package scale

import "syscall"

// childAttr puts a child in its own process group and has the kernel kill
// it when the bench dies, however it dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
