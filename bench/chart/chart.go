// Package chart draws the benchmarks' line plots as PNG files with
// gonum/plot: one or more measured series against a worker count, with
// an optional ideal line drawn dashed.
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line: points (X[i], Y[i]) joined in order.
type Series struct {
	Name string
	X, Y []float64
	// Ideal draws the line dashed and without point marks.
	Ideal bool
}

// Plot is one chart.
type Plot struct {
	Title, XLabel, YLabel string
	// LogX puts X on a log axis (worker counts 64, 256, 1024).
	LogX bool
	// Legend is the corner the legend goes in, away from the lines.
	Legend Corner
	Series []Series
}

// Corner is a corner of the plot.
type Corner uint8

const (
	TopLeft Corner = iota
	TopRight
	BottomRight
)

// palette holds the measured series' colours, in order.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

// WritePNG draws p into path (6 x 4 inches); the file is written to a
// temporary name beside path and renamed, so a failed write leaves no
// partial image.
func (p Plot) WritePNG(path string) error {
	if len(p.Series) == 0 {
		return errors.New("chart: no series")
	}
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Y.Min = 0
	if p.LogX {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	pl.Add(plotter.NewGrid())
	pl.Legend.Top, pl.Legend.Left = p.Legend != BottomRight, p.Legend == TopLeft
	n := 0
	top := 0.0
	for _, s := range p.Series {
		if len(s.X) != len(s.Y) || len(s.X) == 0 {
			return fmt.Errorf("chart: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
		}
		xy := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xy[i].X, xy[i].Y = s.X[i], s.Y[i]
			if p.LogX && s.X[i] <= 0 {
				return fmt.Errorf("chart: series %q: x = %v on a log axis", s.Name, s.X[i])
			}
			top = max(top, s.Y[i])
		}
		if s.Ideal {
			l, err := plotter.NewLine(xy)
			if err != nil {
				return fmt.Errorf("chart: %s: %w", s.Name, err)
			}
			l.Color = color.Gray{Y: 0x70}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			pl.Add(l)
			pl.Legend.Add(s.Name, l)
			continue
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return fmt.Errorf("chart: %s: %w", s.Name, err)
		}
		c := palette[n%len(palette)]
		n++
		l.Color, pts.Color = c, c
		pts.Shape = draw.CircleGlyph{}
		l.Width = vg.Points(1.5)
		pl.Add(l, pts)
		pl.Legend.Add(s.Name, l, pts)
	}
	// Headroom above the highest point keeps it clear of the legend.
	pl.Y.Max = max(pl.Y.Max, 1.2*top)
	wt, err := pl.WriterTo(6*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("chart: %s: %w", path, err)
	}
	dir, base := filepath.Split(path)
	f, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("chart: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("chart: writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// createTemp creates a new file beside base in dir with mode 0644 less
// the umask, the mode os.WriteFile gives the reports written beside the
// charts (os.CreateTemp's files are 0600 whatever the umask).
func createTemp(dir, base string) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("no free temporary name for %s in %s", base, dir)
}
