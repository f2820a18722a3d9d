package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testlong"
)

// belowLeastRE reads the least memory a refused --mem-limit names, whether
// the fixed least of every run or the least of the input.
var belowLeastRE = regexp.MustCompile(`--mem-limit \S+ is below the least .*?(\d+) MiB`)

// TestPartitionMemLimitFloor: a --mem-limit below the least the external
// partitioner works in is refused before anything is read, naming that
// least, P and the workers.
func TestPartitionMemLimitFloor(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "r.bin")
	if _, _, err := run(t, "gen", "rmat", "--scale", "10", "--edge-factor", "8", "--seed", "3", "-o", bin, "-q"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "shards")
	_, _, err := run(t, "partition", "--progress", "none", "-P", "4", "--workers", "2", "--mem-limit", "32MiB", "-o", out, bin)
	if err == nil {
		t.Fatal("--mem-limit 32MiB was accepted")
	}
	re := regexp.MustCompile(`^--mem-limit 32MiB is below the least the partitioner works in \((\d+) MiB for P=4 on 2 workers[,)]`)
	m := re.FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q does not name the least", err)
	}
	if n, _ := strconv.Atoi(m[1]); n <= 32 {
		t.Fatalf("the least named, %d MiB, is not above the limit refused: %v", n, err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused run left %s", out)
	}
}

// hwmEnv makes the test binary run its arguments as trigrid and then write
// its peak resident memory (VmHWM) to the file the variable names. The
// rusage of a child is no measure: it starts from the resident memory of
// the process that started it.
const hwmEnv = "TRIGRID_TEST_HWM_FILE"

func init() {
	if f := os.Getenv(hwmEnv); f != "" {
		code := runMain(os.Args[1:])
		if err := os.WriteFile(f, []byte(strconv.FormatInt(vmHWM(), 10)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		os.Exit(code)
	}
}

// vmHWM is this process's peak resident memory in bytes, or 0.
func vmHWM() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "VmHWM" {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}

// partitionChild runs the test binary as `trigrid partition` in a process of
// its own and returns its error output and peak resident memory.
func partitionChild(t *testing.T, env []string, args ...string) (string, int64, error) {
	t.Helper()
	hwm := filepath.Join(t.TempDir(), "hwm")
	c := exec.Command(os.Args[0], append([]string{"partition", "--progress", "none"}, args...)...)
	c.Env = append(append(os.Environ(), hwmEnv+"="+hwm), env...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	b, rerr := os.ReadFile(hwm)
	if rerr != nil {
		t.Fatalf("partition %v: %v (%v)\n%s", args, rerr, err, stderr.String())
	}
	peak, _ := strconv.ParseInt(string(b), 10, 64)
	if peak == 0 {
		t.Skip("no VmHWM in /proc/self/status")
	}
	return stderr.String(), peak, err
}

// TestPartitionPeakWithinMemLimit: at the least --mem-limit the
// partitioner states (the fixed least, or the input's when that is more)
// and above it, the partitioning process's peak resident memory stays
// within the limit. The default run partitions a small binary graph; the
// long run adds a larger one, its text form, the range scheme and more
// cores than workers.
func TestPartitionPeakWithinMemLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak resident memory is read from /proc on Linux")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory is not the partitioner's")
	}
	dir := t.TempDir()
	gen := func(scale string) string {
		bin := filepath.Join(dir, "r"+scale+".bin")
		if _, _, err := run(t, "gen", "rmat", "--scale", scale, "--edge-factor", "16", "--seed", "1", "-o", bin, "-q"); err != nil {
			t.Fatal(err)
		}
		return bin
	}
	type tc struct {
		file  string
		extra []string
		env   []string
	}
	cases := []tc{{file: gen("16")}}
	if testlong.Enabled() {
		r20 := gen("20")
		txt := filepath.Join(dir, "r18.txt")
		if _, _, err := run(t, "convert", gen("18"), txt); err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			tc{file: r20},
			tc{file: r20, extra: []string{"--scheme", "range"}},
			tc{file: r20, extra: []string{"--workers", "2"}, env: []string{"GOMAXPROCS=8"}},
			tc{file: txt},
		)
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s %v %v", filepath.Base(c.file), c.extra, c.env)
		out := filepath.Join(dir, "out")
		args := func(limit string) []string {
			return append(append([]string{"-P", "4", "--force", "--tmp-dir", dir, "--mem-limit", limit, "-o", out}, c.extra...), c.file)
		}
		// The least, stated by a refusal; a run at the least may state a
		// larger one for its input.
		stderr, _, err := partitionChild(t, c.env, args("32MiB")...)
		if err == nil {
			t.Fatalf("%s: --mem-limit 32MiB was accepted", name)
		}
		least := statedMiB(stderr)
		if least <= 32 {
			t.Fatalf("%s: no least above 32 MiB stated:\n%s", name, stderr)
		}
		for _, limit := range []int64{least, least + least/2} {
			for round := 0; ; round++ {
				stderr, peak, err := partitionChild(t, c.env, args(fmt.Sprintf("%dMiB", limit))...)
				if err != nil {
					more := statedMiB(stderr)
					if more <= limit || round == 5 {
						t.Fatalf("%s: --mem-limit %d MiB: %v\n%s", name, limit, err, stderr)
					}
					limit = more
					continue
				}
				t.Logf("%s: --mem-limit %d MiB: peak %.1f MiB", name, limit, float64(peak)/(1<<20))
				if peak > limit<<20 {
					t.Errorf("%s: --mem-limit %d MiB: the peak resident memory was %.1f MiB", name, limit, float64(peak)/(1<<20))
				}
				break
			}
		}
	}
}

// statedMiB reads the least a refused --mem-limit names, or 0.
func statedMiB(msg string) int64 {
	m := belowLeastRE.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}
