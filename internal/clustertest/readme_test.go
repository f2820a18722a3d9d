package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README's "Many machines" commands run as written: the export line,
// a coordinator, a worker, submit and status, with the example addresses
// replaced by loopback, the ports by free ones, the paths by temporary
// directories and the worker's GPU by the CPU. The count is exact.
func TestReadmeClusterExample(t *testing.T) {
	t.Parallel()
	lines := readmeBlock(t, "## Many machines")
	if len(lines) != 5 {
		t.Fatalf("README's Many machines block has %d lines, want export, coordinator, worker, submit, status:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	shared, state := t.TempDir(), t.TempDir()
	if _, stderr, err := cli(t, 30*time.Second, "convert", "--progress", "none", grqc(t), filepath.Join(shared, "graph.bin")); err != nil {
		t.Fatalf("convert: %v\n%s", err, stderr)
	}
	repl := []string{
		"10.0.0.1", "127.0.0.1", "10.0.0.2", "127.0.0.1",
		"/var/lib/trigrid", state, "/shared", shared,
		"--device gpu", "--device cpu",
	}
	for _, port := range []string{":7000", ":7946", ":7947"} {
		repl = append(repl, port, fmt.Sprintf(":%d", freePort(t)))
	}
	r := strings.NewReplacer(repl...)
	for i := range lines {
		lines[i] = r.Replace(lines[i])
	}

	// The export line, evaluated once: every node shares its values.
	if !strings.HasPrefix(lines[0], "export ") {
		t.Fatalf("first line %q is not the export line", lines[0])
	}
	out, err := exec.Command("bash", "-c", lines[0]+`; printf '%s\n%s\n' "$TRIGRID_TOKEN" "$TRIGRID_GOSSIP_KEY"`).Output()
	vals := strings.Fields(string(out))
	if err != nil || len(vals) != 2 {
		t.Fatalf("export line: %v, %q", err, out)
	}
	shell := func(ctx context.Context, line string) *exec.Cmd {
		if !strings.HasPrefix(line, "trigrid ") {
			t.Fatalf("line %q does not run trigrid", line)
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+line)
		cmd.Env = append(env(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"),
			"TRIGRID_TOKEN="+vals[0], "TRIGRID_GOSSIP_KEY="+vals[1])
		cmd.WaitDelay = 5 * time.Second
		return cmd
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var daemons []*exec.Cmd
	defer func() {
		for _, d := range daemons {
			d.Process.Kill()
			d.Wait()
		}
	}()
	logs := map[string]*syncBuffer{}
	for i, name := range []string{"coordinator", "worker"} {
		d := shell(ctx, lines[1+i])
		logs[name] = &syncBuffer{}
		d.Stdout, d.Stderr = logs[name], logs[name]
		if err := d.Start(); err != nil {
			t.Fatal(err)
		}
		daemons = append(daemons, d)
	}
	defer func() {
		if t.Failed() {
			for name, b := range logs {
				t.Logf("---- %s:\n%s", name, b.String())
			}
		}
	}()
	run := func(line string) string {
		var o, e bytes.Buffer
		c := shell(ctx, line)
		c.Stdout, c.Stderr = &o, &e
		if err := c.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", line, err, o.String(), e.String())
		}
		return o.String()
	}
	// Wait for the coordinator to answer, as a user would, through the
	// status line.
	waitFor(t, 30*time.Second, "the coordinator to answer status", func() bool {
		return shell(ctx, lines[4]).Run() == nil
	})
	got := run(lines[3])
	if want := "48,260"; !strings.Contains(got, want) && !strings.Contains(got, "48260") {
		t.Fatalf("submit printed no %s triangles:\n%s", want, got)
	}
	if st := run(lines[4]); !strings.Contains(st, "done") {
		t.Errorf("status does not show the job done:\n%s", st)
	}
	if wholeCount(t, grqc(t)) != grqcTriangles {
		t.Fatal("the whole-graph count of ca-GrQc is not 48260")
	}
}

// readmeBlock returns the command lines of the first sh block after the
// heading, comments and blank lines left out.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(repoFile("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no %q section", heading)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatalf("README.md's %q section has no sh block", heading)
	}
	s = s[start+len("```sh\n"):]
	s = s[:strings.Index(s, "```")]
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
