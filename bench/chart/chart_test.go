package chart

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A chart is a PNG that decodes, of the size asked for; bad series are
// errors that name them and leave no file.
func TestWritePNG(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "speedup.png")
	p := Plot{Title: "speedup", XLabel: "workers", YLabel: "speedup", LogX: true, Series: []Series{
		{Name: "measured", X: []float64{1, 2, 4}, Y: []float64{1, 1.9, 3.5}},
		{Name: "ideal", X: []float64{1, 2, 4}, Y: []float64{1, 2, 4}, Ideal: true},
	}}
	if err := p.WritePNG(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if want := os.FileMode(0o644) &^ umask(t); fi.Mode().Perm() != want {
		t.Errorf("mode %v, want %v (as os.WriteFile gives the reports beside it)", fi.Mode().Perm(), want)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 250 {
		t.Errorf("image %v, want about 6 x 4 inches", b)
	}
	bad := filepath.Join(dir, "bad.png")
	for _, s := range []Series{
		{Name: "short", X: []float64{1, 2}, Y: []float64{1}},
		{Name: "zero", X: []float64{0, 2}, Y: []float64{1, 2}},
	} {
		err := Plot{LogX: true, Series: []Series{s}}.WritePNG(bad)
		if err == nil || !strings.Contains(err.Error(), s.Name) {
			t.Errorf("series %q: %v", s.Name, err)
		}
	}
	if err := (Plot{}).WritePNG(bad); err == nil {
		t.Error("no series: no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d files, want only speedup.png", len(entries))
	}
}

// umask is the process's umask, read from the mode of a file os.WriteFile
// creates with 0644.
func umask(t *testing.T) os.FileMode {
	p := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return 0o644 &^ fi.Mode().Perm()
}
