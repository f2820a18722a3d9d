package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	if err := WriteCSV(path, [][]string{{"n", "note"}, {"1", "a, \"b\""}}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if want := "n,note\n1,\"a, \"\"b\"\"\"\n"; err != nil || string(got) != want {
		t.Fatalf("wrote %q, %v; want %q", got, err, want)
	}
	if err := WriteCSV(filepath.Join(path, "under-a-file.csv"), nil); err == nil {
		t.Fatal("a CSV under a file was written")
	}
}

func TestNumbers(t *testing.T) {
	ir := 1.0333
	if Float(2.5) != "2.500000" || IR(&ir) != "1.033" || IR(nil) != "inf" {
		t.Fatalf("Float %s, IR %s %s", Float(2.5), IR(&ir), IR(nil))
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	if err := WriteJSON(path, map[string]uint64{"triangles": 1 << 40}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if want := "{\n  \"triangles\": 1099511627776\n}\n"; err != nil || string(got) != want {
		t.Fatalf("wrote %q, %v; want %q", got, err, want)
	}
	if err := WriteJSON(path, func() {}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a value JSON cannot hold: %v, want an error naming %s", err, path)
	}
	if err := WriteJSON(filepath.Join(path, "under-a-file.json"), 1); err == nil {
		t.Fatal("a JSON file under a file was written")
	}
}
