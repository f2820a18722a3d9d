package report

import (
	"os"
	"path/filepath"
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
