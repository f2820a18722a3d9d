package edgeio

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// A text stream whose last line has no newline was cut short: the line
// may be a legal edge ("12 3" of "12 345"), so it is an error that names
// the stream, the line and its text, in every text format that a stream
// may hold. A stream that ends with its newline, blank tails and
// compressed streams (whose framing detects a cut) read as before.
func TestCutTextStream(t *testing.T) {
	for _, c := range []struct {
		name, text string
		line       int64
		cut        string
	}{
		{"edge list", "1 2\n12 3", 2, "12 3"},
		{"tsv", "1\t2\n3\t4\n12\t3", 3, "12\t3"},
		{"mtx", "%%MatrixMarket matrix coordinate pattern general\n400 400 2\n1 2\n12 3", 4, "12 3"},
		{"comment", "1 2\n# a comm", 2, "# a comm"},
	} {
		_, _, _, err := readStreamIDs(context.Background(), strings.NewReader(c.text), "-", ReadOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != c.line || pe.Text != c.cut || !strings.Contains(err.Error(), "stdin:") ||
			!strings.Contains(err.Error(), "cut short") {
			t.Errorf("%s cut mid-line: %v, want a cut at line %d %q of stdin", c.name, err, c.line, c.cut)
		}
		_, _, _, err = readStreamIDs(context.Background(), strings.NewReader(c.text+"45\n"), "-", ReadOptions{})
		if err != nil {
			t.Errorf("%s whole: %v", c.name, err)
		}
	}
	for _, whole := range []string{"1 2\n3 4\n", "1 2\n  \t", ""} {
		_, es, _, err := readStreamIDs(context.Background(), strings.NewReader(whole), "-", ReadOptions{})
		if err != nil || len(es) != strings.Count(whole, " 2")+strings.Count(whole, "3 4") {
			t.Errorf("%q: %d edges, %v", whole, len(es), err)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("1 2\n3 4"))
	zw.Close()
	if _, es, _, err := readStreamIDs(context.Background(), &gz, "-", ReadOptions{}); err != nil || len(es) != 2 {
		t.Errorf("gzip stream without a final newline: %d edges, %v", len(es), err)
	}
}

// A FIFO read by path is a stream too; a regular file without a final
// newline is whole (its size is what was written).
func TestCutTextThroughFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "edges")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString("1 2\n2 3\n12 3")
		f.Close()
	}()
	_, _, err := ReadFile(context.Background(), fifo, ReadOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Text != "12 3" || pe.Path != fifo {
		t.Fatalf("cut FIFO: %v", err)
	}
	file := filepath.Join(dir, "g.txt")
	if err := os.WriteFile(file, []byte("1 2\n2 3\n1 3"), 0o644); err != nil {
		t.Fatal(err)
	}
	es, _, err := ReadFile(context.Background(), file, ReadOptions{})
	if err != nil || len(es) != 3 || es[2] != (graph.Edge{U: 1, V: 3}) {
		t.Fatalf("file without a final newline: %v, %v", es, err)
	}
}

// Every reader of a path takes a FIFO as a stream, read once: the ids
// reader (binary and text) and the binary probe, which must not open it.
func TestFIFOReadOnce(t *testing.T) {
	dir := t.TempDir()
	var bin bytes.Buffer
	if err := Write(&bin, []graph.Edge{{U: 1, V: 2}, {U: 2, V: 3}, {U: 1, V: 3}}, WriteOptions{Format: FormatBin}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, data string }{{"text", "1 2\n2 3\n1 3\n"}, {"binary", bin.String()}} {
		fifo := filepath.Join(dir, c.name)
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		go func() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.WriteString(c.data)
			f.Close()
		}()
		if _, _, ok, _ := ReadBinaryPairs32(context.Background(), fifo, ReadOptions{}); ok {
			t.Fatalf("%s: the binary probe took a FIFO", c.name)
		}
		p32, es, _, err := ReadFileIDs(context.Background(), fifo, ReadOptions{})
		if err != nil || len(p32)/2+len(es) != 3 {
			t.Fatalf("%s FIFO: %d pairs, %d edges, %v; want 3 edges", c.name, len(p32)/2, len(es), err)
		}
	}
}
