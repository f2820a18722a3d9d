package osmem

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Available returns the tighter of GOMEMLIMIT and the memory available
// now (MemAvailable), with a word for a message; 0 when neither is known.
// What a reader allocates on the word of a header it cannot check yet, or
// a generator for a list in memory, is checked against it first: past it
// the system may refuse the allocation, which the runtime cannot survive.
func Available() (bytes uint64, source string) {
	return tighter(meminfo("MemAvailable:"), "memory available on this machine")
}

// tighter is the smaller of GOMEMLIMIT and os (named osWord), 0 when
// neither is known.
func tighter(os uint64, osWord string) (bytes uint64, source string) {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		bytes, source = uint64(l), "memory limit (GOMEMLIMIT)"
	}
	if os > 0 && (bytes == 0 || os < bytes) {
		bytes, source = os, osWord
	}
	return bytes, source
}

// meminfo reads the line key (with its colon) of /proc/meminfo, in bytes;
// 0 where it is unavailable.
func meminfo(key string) uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, key) {
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
