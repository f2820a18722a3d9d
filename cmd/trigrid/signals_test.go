package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testlong"
	"github.com/trigrid/trigrid/partition"
)

// asMainEnv makes the test binary run as trigrid itself: the fast
// signal tests start it as a separate process without building one.
const asMainEnv = "TRIGRID_TEST_RUN_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(runMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// proc is a trigrid process under test.
type proc struct {
	cmd    *exec.Cmd
	stderr syncBuffer // read while the process writes it (caught)
	done   chan struct{}
	err    error
}

// caught waits until the process says on stderr that it caught a signal
// and is stopping: from then on its end of input can no longer let it
// finish as if it had not been signalled.
func (p *proc) caught(t *testing.T, sig os.Signal) {
	t.Helper()
	waitFor(t, 30*time.Second, "the process to catch "+signalName(sig), func() bool {
		return strings.Contains(p.stderr.String(), signalName(sig)+": stopping")
	})
}

func startTrigrid(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), asMainEnv+"=1")
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns the exit status, failing the test after limit.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("still running %s after the signal\n%s", limit, p.stderr.String())
	}
	var ee *exec.ExitError
	if p.err == nil {
		return 0
	}
	if errors.As(p.err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	t.Fatal(p.err)
	return 0
}

// waitFor polls until cond holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func spillDirs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, partition.SpillPrefix+"-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPartitionSignals starts `trigrid partition` as a process reading
// from a FIFO, so it is certainly mid-partition (spill directory made,
// input not finished) when the signal arrives. SIGINT and SIGTERM must
// stop it with status 130 and 143, its spill directory and output gone;
// after SIGKILL the spill directory stays, and the next run removes it.
func TestPartitionSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX signals and FIFOs")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGKILL, -int(syscall.SIGKILL)}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			tmp, out := filepath.Join(dir, "tmp"), filepath.Join(dir, "out")
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			fifo := filepath.Join(dir, "in.txt")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
			p := startTrigrid(t, bin, "partition", "--progress", "none", "-P", "2", "--mem-limit", "4GiB",
				"--tmp-dir", tmp, "-o", out, fifo)
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var edges bytes.Buffer
			for k := range 20000 {
				fmt.Fprintf(&edges, "%d %d\n", k, (k*7919+1)%20011)
			}
			if _, err := w.Write(edges.Bytes()); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 20*time.Second, "the spill directory", func() bool { return len(spillDirs(t, tmp)) == 1 })
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			// Closing the input lets a read blocked on the FIFO return;
			// a process that ignored the signal would now finish with 0.
			// It is closed once the process has caught the signal (a
			// signal its handler has not yet seen cannot be told from one
			// that came after the input ended).
			if tc.sig != syscall.SIGKILL {
				p.caught(t, tc.sig)
			}
			w.Close()
			if got := p.wait(t, 30*time.Second); got != tc.want {
				t.Fatalf("exit status %d, want %d\n%s", got, tc.want, p.stderr.String())
			}
			if tc.sig == syscall.SIGKILL {
				if len(spillDirs(t, tmp)) != 1 {
					t.Fatal("SIGKILL: no spill directory left to find (the test would prove nothing)")
				}
				small := write(t, "k4.txt", "0 1\n0 2\n0 3\n1 2\n1 3\n2 3\n")
				next := startTrigrid(t, bin, "partition", "--progress", "none", "-P", "2", "--mem-limit", "4GiB",
					"--tmp-dir", tmp, "-o", filepath.Join(dir, "out2"), small)
				if got := next.wait(t, 30*time.Second); got != 0 {
					t.Fatalf("next run: status %d\n%s", got, next.stderr.String())
				}
				if !strings.Contains(next.stderr.String(), "removed the spill directory") {
					t.Errorf("next run did not report the stale directory:\n%s", next.stderr.String())
				}
			} else if !strings.Contains(p.stderr.String(), "stopped by "+signalName(tc.sig)) {
				t.Errorf("stderr does not say what stopped it:\n%s", p.stderr.String())
			}
			if d := spillDirs(t, tmp); len(d) != 0 {
				t.Fatalf("spill directories left: %v", d)
			}
			if ents, err := os.ReadDir(out); err == nil && len(ents) != 0 {
				t.Fatalf("output left: %v", ents)
			}
		})
	}
}

// TestPartitionSignalWhileWriting builds the binary and interrupts a
// partition of a real graph while it writes shards: the shards written so
// far, in the directory beside the output, are removed, and the output
// never appears.
func TestPartitionSignalWhileWriting(t *testing.T) {
	testlong.Skip(t)
	if runtime.GOOS == "windows" {
		t.Skip("POSIX signals")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "trigrid")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	g := filepath.Join(dir, "r.bin")
	if out, err := exec.Command(bin, "gen", "rmat", "--scale", "19", "--edge-factor", "16", "--seed", "2", "-q", "-o", g).CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		sig      syscall.Signal
		want     int
		memLimit string
	}{{syscall.SIGINT, 130, "4GiB"}, {syscall.SIGTERM, 143, "0"}} {
		t.Run(fmt.Sprintf("%v/mem-limit=%s", tc.sig, tc.memLimit), func(t *testing.T) {
			tmp, out := filepath.Join(dir, "tmp-"+tc.memLimit), filepath.Join(dir, "out-"+tc.memLimit)
			if err := os.Mkdir(tmp, 0o755); err != nil {
				t.Fatal(err)
			}
			p := startTrigrid(t, bin, "partition", "--progress", "none", "-P", "8", "--mem-limit", tc.memLimit, "--tmp-dir", tmp, "-o", out, g)
			// A new output is written beside its path until complete.
			beside := filepath.Join(dir, ".out-"+tc.memLimit+".trigrid-new-*")
			waitFor(t, 120*time.Second, "the first shard", func() bool {
				m, _ := filepath.Glob(filepath.Join(beside, "shard-*"))
				return len(m) > 0
			})
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			if got := p.wait(t, 60*time.Second); got != tc.want {
				t.Fatalf("exit status %d, want %d (finished before the signal?)\n%s", got, tc.want, p.stderr.String())
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				ents, _ := os.ReadDir(out)
				t.Fatalf("output directory left with %d entries", len(ents))
			}
			if d := spillDirs(t, tmp); len(d) != 0 {
				t.Fatalf("spill directories left: %v", d)
			}
			if m, _ := filepath.Glob(beside); len(m) != 0 {
				t.Fatalf("unfinished partitionings left: %v", m)
			}
		})
	}
}

// TestInterruptsSecondSignal: the first signal cancels the context, the
// second exits with its status after hardExitDelay.
func TestInterruptsSecondSignal(t *testing.T) {
	var stderr syncBuffer
	ctx, in := watchInterrupts(t.Context(), &stderr)
	defer in.stop()
	exited := make(chan int, 1)
	in.exit = func(code int) { exited <- code }
	in.ch <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("first signal did not cancel")
	}
	if in.caught() != syscall.SIGTERM {
		t.Fatalf("caught %v", in.caught())
	}
	in.ch <- syscall.SIGINT
	select {
	case code := <-exited:
		if code != 130 {
			t.Fatalf("second signal exited with %d, want 130", code)
		}
	case <-time.After(hardExitDelay + 30*time.Second):
		t.Fatal("second signal did not exit")
	}
	if !strings.Contains(stderr.String(), "SIGTERM: stopping") || !strings.Contains(stderr.String(), "SIGINT again") {
		t.Fatalf("stderr: %q", stderr.String())
	}
}
