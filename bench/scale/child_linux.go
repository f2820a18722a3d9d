package scale

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// childAttr puts a child in its own process group and has the kernel kill
// it when the bench dies, however it dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// userHz is the kernel's USER_HZ, the unit of /proc's CPU times (100 on
// every Linux platform Go supports).
const userHz = 100

func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / userHz }

// procCPU is the user and system CPU time process pid has used, from
// /proc/PID/stat; false when it cannot be read.
func procCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses.
	at := bytes.LastIndexByte(b, ')')
	if at < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[at+1:]))
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ticks(ut + st), true
}

// hostBusy is the time the host's cores together have spent busy (all
// but idle and I/O wait) since boot, from /proc/stat's cpu line; false
// when it cannot be read.
func hostBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy int64
	// user nice system idle iowait irq softirq [steal guest guest_nice]:
	// steal is time the hypervisor gave elsewhere, guest is within user.
	for i, v := range f[1:min(len(f), 9)] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return ticks(busy), true
}
