package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/graph/gen"
	"github.com/trigrid/trigrid/internal/testgraphs"
)

// TestGenPipeCount runs `trigrid gen ... -o - | trigrid count -` as two
// processes joined by a pipe, in text and in binary, on the CPU and through
// the device library, with progress forced on: the stream on standard output must hold only edges (the summary and
// the progress go to standard error), and the count must be the count of
// the same graph generated into a file, which an independent brute force
// checks too.
func TestGenPipeCount(t *testing.T) {
	const scale, ef, seed = 11, 8, 5
	edges, err := gen.RMAT(scale, ef, seed, 1)
	if err != nil {
		t.Fatal(err)
	}
	pairs := make([][2]uint64, len(edges))
	for i, e := range edges {
		pairs[i] = [2]uint64{e.U, e.V}
	}
	want := testgraphs.LocalCounts(pairs).Total
	genArgs := []string{"gen", "rmat", "--scale", fmt.Sprint(scale), "--edge-factor", fmt.Sprint(ef), "--seed", fmt.Sprint(seed), "--progress", "log"}

	file := filepath.Join(t.TempDir(), "r.bin")
	if _, stderr, err := run(t, append(genArgs, "-o", file)...); err != nil {
		t.Fatalf("gen -o %s: %v\n%s", file, err, stderr)
	}
	fromFile := countJSON(t, file).Triangles
	if fromFile != want {
		t.Fatalf("count of the file: %d triangles, brute force %d", fromFile, want)
	}

	// The device path through the library's reference implementation:
	// standard input's 32-bit binary pairs go to it as a file's do.
	lib := deviceLibrary(t)
	for _, tc := range []struct{ format, device string }{{"edgelist", "cpu"}, {"bin", "cpu"}, {"bin", "gpu"}, {"edgelist", "gpu"}} {
		format := tc.format
		t.Run(format+"/"+tc.device, func(t *testing.T) {
			g := exec.Command(os.Args[0], append(genArgs, "--format", format, "-o", "-")...)
			countArgs := []string{"count", "--json", "--progress", "none", "--device", tc.device}
			if tc.device == "gpu" {
				countArgs = append(countArgs, "--cuda-lib", lib)
			}
			c := exec.Command(os.Args[0], append(countArgs, "-")...)
			g.Env = append(os.Environ(), asMainEnv+"=1")
			c.Env = g.Env
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var genErr, out, countErr bytes.Buffer
			g.Stdout, g.Stderr = pw, &genErr
			c.Stdin, c.Stdout, c.Stderr = pr, &out, &countErr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			pr.Close()
			pw.Close()
			done := make(chan [2]error, 1)
			go func() {
				ge := g.Wait()
				done <- [2]error{ge, c.Wait()}
			}()
			var errs [2]error
			select {
			case errs = <-done:
			case <-time.After(2 * time.Minute):
				g.Process.Kill()
				c.Process.Kill()
				t.Fatalf("gen | count still running after 2 minutes\ngen: %s\ncount: %s", genErr.String(), countErr.String())
			}
			if errs[0] != nil || errs[1] != nil {
				t.Fatalf("gen: %v\n%s\ncount: %v\n%s", errs[0], genErr.String(), errs[1], countErr.String())
			}
			if !strings.Contains(genErr.String(), fmt.Sprintf("wrote %d raw edges to -", len(edges))) {
				t.Fatalf("gen's summary is not on its standard error:\n%s", genErr.String())
			}
			rep := decodeReport(t, out.String())
			if rep.Triangles != fromFile {
				t.Fatalf("gen -o - | count -: %d triangles, the file counts %d", rep.Triangles, fromFile)
			}
			if (rep.Device == "cpu") != (tc.device == "cpu") {
				t.Fatalf("count --device %s counted on %q", tc.device, rep.Device)
			}
		})
	}
}

// TestGenSameFileWhateverTheWorkers: the file gen writes for a seed is the
// same byte for byte whatever --workers is, and holds the edges gen.RMAT
// returns for that seed.
func TestGenSameFileWhateverTheWorkers(t *testing.T) {
	dir := t.TempDir()
	want, err := gen.RMAT(12, 20, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{"bin", "txt"} {
		var first []byte
		for _, workers := range []string{"1", "3", "0"} {
			path := filepath.Join(dir, "r-"+workers+"."+ext)
			if _, stderr, err := run(t, "gen", "rmat", "--scale", "12", "--edge-factor", "20", "--seed", "3", "--workers", workers, "-q", "-o", path); err != nil {
				t.Fatalf("gen --workers %s: %v\n%s", workers, err, stderr)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
				got, _, err := edgeio.ReadFile(context.Background(), path, edgeio.ReadOptions{})
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%s: read back %d edges (%v), gen.RMAT gives %d or others", path, len(got), err, len(want))
				}
			} else if !bytes.Equal(b, first) {
				t.Fatalf("%s: --workers %s writes another file than --workers 1", ext, workers)
			}
		}
	}
}

// TestGenPipeCutShort: `gen -o - | count -` where the stream stops short,
// as when the generator dies: gen's process runs, the test passes on the
// first bytes of its output to count's process, then ends gen and closes
// count's input. Cut mid-line in text, and anywhere in the binary format
// that -o - writes by default, count fails (exit status not 0) naming
// standard input, and prints no count.
func TestGenPipeCutShort(t *testing.T) {
	genArgs := []string{"gen", "rmat", "--scale", "10", "--edge-factor", "8", "--seed", "3", "-q", "-o", "-"}
	for _, tc := range []struct {
		name   string
		format []string
		want   string
	}{
		{"text", []string{"--format", "edgelist"}, "cut short"},
		{"default", nil, "truncated binary edge list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := exec.Command(os.Args[0], append(genArgs, tc.format...)...)
			c := exec.Command(os.Args[0], "count", "--json", "--progress", "none", "--device", "cpu", "-")
			g.Env = append(os.Environ(), asMainEnv+"=1")
			c.Env = g.Env
			gout, err := g.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cin, err := c.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, countErr bytes.Buffer
			c.Stdout, c.Stderr = &out, &countErr
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			defer c.Process.Kill()
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			defer g.Process.Kill()
			// The first 10000 bytes, then in text more up to a last line
			// that is a legal edge itself ("12 3" of "12 345"); the binary
			// stream stops inside an edge.
			head := make([]byte, 10000, 10100)
			if _, err := io.ReadFull(gout, head); err != nil {
				t.Fatal(err)
			}
			for b := make([]byte, 1); len(tc.format) > 0 && !legalEdgeLine(head[bytes.LastIndexByte(head, '\n')+1:]); {
				if _, err := io.ReadFull(gout, b); err != nil {
					t.Fatal(err)
				}
				head = append(head, b[0])
			}
			if len(tc.format) == 0 && string(head[:7]) != "TGEDGES" {
				t.Fatalf("gen -o - wrote %q..., not the binary format", head[:8])
			}
			g.Process.Kill()
			g.Wait()
			if _, err := cin.Write(head); err != nil {
				t.Fatal(err)
			}
			cin.Close()
			done := make(chan error, 1)
			go func() { done <- c.Wait() }()
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("count still running 2 minutes after its input ended\n%s", countErr.String())
			}
			if err == nil || out.Len() != 0 {
				t.Fatalf("count of a stream cut short: %v, output %q, want a failure and no count", err, out.String())
			}
			if !strings.Contains(countErr.String(), tc.want) || !strings.Contains(countErr.String(), "stdin") {
				t.Fatalf("count's error does not say the stream was cut (%q):\n%s", tc.want, countErr.String())
			}
		})
	}
}

// legalEdgeLine says whether line is two numbers and nothing else.
func legalEdgeLine(line []byte) bool {
	f := strings.Fields(string(line))
	return len(f) == 2 && strings.Trim(f[0]+f[1], "0123456789") == ""
}
