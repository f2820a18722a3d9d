package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progressMode says how long phases show progress on stderr.
type progressMode int

const (
	progressAuto progressMode = iota // bar on a terminal, log lines otherwise
	progressBar
	progressLog
	progressNone
)

func parseProgressMode(s string) (progressMode, error) {
	switch s {
	case "auto", "":
		return progressAuto, nil
	case "bar":
		return progressBar, nil
	case "log":
		return progressLog, nil
	case "none":
		return progressNone, nil
	}
	return 0, fmt.Errorf("--progress %q: want auto, bar, log or none", s)
}

// progress draws one phase at a time. Updates may come from any goroutine;
// they are cheap when nothing needs drawing, so hot loops can call them.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	bar      bool
	off      bool
	interval time.Duration // between log lines

	phase   string
	unit    string
	total   int64
	done    int64
	start   time.Time
	last    time.Time
	drawn   bool
	barLast time.Time
	// stopTick ends the current phase's ticker, which keeps a phase
	// without updates visible (elapsed time) in either mode.
	stopTick chan struct{}
}

func newProgress(w io.Writer, mode progressMode) *progress {
	p := &progress{w: w, interval: 5 * time.Second}
	switch mode {
	case progressNone:
		p.off = true
	case progressBar:
		p.bar = true
	case progressLog:
	case progressAuto:
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			p.bar = true
		}
	}
	return p
}

// Start begins a phase; total <= 0 means unknown. unit is "bytes",
// "edges" or "" (plain counts).
func (p *progress) Start(phase, unit string, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
	p.phase, p.unit, p.total, p.done = phase, unit, total, 0
	p.start = time.Now()
	p.last = p.start
	if !p.off {
		p.stopTick = make(chan struct{})
		go p.tick(p.stopTick)
	}
}

// tick redraws the bar or writes a log line for the current phase when
// its updates are rare or absent (orienting, splitting), until stop is
// closed.
func (p *progress) tick(stop chan struct{}) {
	period := p.interval
	if p.bar {
		period = 500 * time.Millisecond
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			p.mu.Lock()
			if p.stopTick != stop {
				p.mu.Unlock()
				return
			}
			if p.bar {
				if now.Sub(p.barLast) >= period {
					p.barLast = now
					p.drawBarLocked(now)
				}
			} else if now.Sub(p.last) >= p.interval {
				p.last = now
				p.logLineLocked(now)
			}
			p.mu.Unlock()
		}
	}
}

// Update records progress of the current phase.
func (p *progress) Update(done, total int64) {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	if total > 0 {
		p.total = total
	}
	now := time.Now()
	if p.bar {
		// Redrawing more than ~10 times a second only costs time.
		if now.Sub(p.barLast) < 100*time.Millisecond || now.Sub(p.start) < 300*time.Millisecond {
			return
		}
		p.barLast = now
		p.drawBarLocked(now)
		return
	}
	if now.Sub(p.last) >= p.interval {
		p.last = now
		p.logLineLocked(now)
	}
}

func (p *progress) logLineLocked(now time.Time) {
	elapsed := now.Sub(p.start).Round(100 * time.Millisecond)
	if p.done == 0 && p.total <= 0 {
		fmt.Fprintf(p.w, "%s: running for %s\n", p.phase, elapsed)
		return
	}
	fmt.Fprintf(p.w, "%s: %s after %s\n", p.phase, p.amountLocked(), elapsed)
}

// Done ends the current phase.
func (p *progress) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
}

func (p *progress) finishLocked() {
	if p.stopTick != nil {
		close(p.stopTick)
		p.stopTick = nil
	}
	if p.drawn {
		// Clear the bar line so the report starts on a clean line.
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 78))
		p.drawn = false
	}
	p.phase = ""
}

func (p *progress) drawBarLocked(now time.Time) {
	const width = 30
	line := ""
	if p.total > 0 {
		frac := float64(p.done) / float64(p.total)
		if frac > 1 {
			frac = 1
		}
		n := int(frac * width)
		line = fmt.Sprintf("%-10s [%s%s] %5.1f%% %s %s", p.phase, strings.Repeat("=", n), strings.Repeat(" ", width-n),
			100*frac, p.amountLocked(), now.Sub(p.start).Round(100*time.Millisecond))
	} else {
		line = fmt.Sprintf("%-10s %s %s", p.phase, p.amountLocked(), now.Sub(p.start).Round(100*time.Millisecond))
	}
	if len(line) > 78 {
		line = line[:78]
	}
	fmt.Fprintf(p.w, "\r%-78s", line)
	p.drawn = true
}

func (p *progress) amountLocked() string {
	f := func(v int64) string {
		if p.unit == "bytes" {
			return humanBytes(v)
		}
		return humanCount(float64(v))
	}
	if p.total > 0 {
		return fmt.Sprintf("%s/%s", f(p.done), f(p.total))
	}
	return f(p.done)
}

// Func returns an update callback for libraries that take
// func(done, total int64).
func (p *progress) Func() func(done, total int64) {
	if p == nil || p.off {
		return nil
	}
	return p.Update
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func humanCount(v float64) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.2fT", v/1e12)
	case v >= 1e9:
		return fmt.Sprintf("%.2fG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fK", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
