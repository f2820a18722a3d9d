package osmem

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Limit returns the tighter of GOMEMLIMIT and the machine's total memory,
// with a word for a message; 0 when neither is known. Readers and
// generators check what they are about to allocate against it, so that a
// size that cannot fit is a clear error rather than an out-of-memory kill.
func Limit() (bytes uint64, source string) {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		bytes, source = uint64(l), "memory limit (GOMEMLIMIT)"
	}
	if t := memTotal(); t > 0 && (bytes == 0 || t < bytes) {
		bytes, source = t, "memory of this machine"
	}
	return bytes, source
}

// memTotal reads MemTotal from /proc/meminfo; 0 where it is unavailable.
func memTotal() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "MemTotal:") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			return 0
		}
		kb, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil || kb > math.MaxUint64/1024 {
			return 0
		}
		return kb * 1024
	}
	return 0
}
