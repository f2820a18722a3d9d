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
	// width is the terminal's width in columns for the bar (80 when it
	// cannot be read).
	width int
	// detail follows the amount in log lines (", 4 running").
	detail string
	rate   rateMeter
	// clock is time.Now; tests set their own.
	clock func() time.Time
	// stopTick ends the current phase's ticker, which keeps a phase
	// without updates visible (elapsed time) in either mode.
	stopTick chan struct{}
}

func newProgress(w io.Writer, mode progressMode) *progress {
	p := &progress{w: w, interval: 5 * time.Second, width: 80, clock: time.Now}
	f, isFile := w.(*os.File)
	switch mode {
	case progressNone:
		p.off = true
	case progressBar:
		p.bar = true
	case progressLog:
	case progressAuto:
		p.bar = isFile && term.IsTerminal(int(f.Fd()))
	}
	if p.bar && isFile {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols >= 40 {
			p.width = cols
		}
	}
	return p
}

// Bar reports whether progress draws a bar (a terminal) rather than log
// lines.
func (p *progress) Bar() bool { return p != nil && p.bar && !p.off }

// Start begins a phase; total <= 0 means unknown. unit is "bytes",
// "edges" or "" (plain counts).
func (p *progress) Start(phase, unit string, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
	p.phase, p.unit, p.total, p.done, p.detail = phase, unit, total, 0, ""
	p.start = p.clock()
	p.last = p.start
	p.rate.reset(p.start)
	if !p.off {
		p.stopTick = make(chan struct{})
		period := p.interval
		if p.bar {
			period = 500 * time.Millisecond
		}
		go p.tick(p.stopTick, period)
	}
}

// tick redraws the bar or writes a log line for the current phase when
// its updates are rare or absent (orienting, splitting), until stop is
// closed.
func (p *progress) tick(stop chan struct{}, period time.Duration) {
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
	now := p.clock()
	p.rate.add(now, done)
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

// SetDetail sets what log lines add after the amount of the current
// phase (", 4 running"); the bar leaves it out.
func (p *progress) SetDetail(detail string) {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	p.detail = detail
	p.mu.Unlock()
}

// Note writes msg on a line of its own: above the bar on a terminal (the
// bar comes back at its next redraw), among the log lines otherwise.
func (p *progress) Note(msg string) {
	if p == nil || p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearBarLocked()
	fmt.Fprintln(p.w, msg)
}

func (p *progress) logLineLocked(now time.Time) {
	fmt.Fprintln(p.w, p.logTextLocked(now))
}

// logTextLocked is one log line: "count: 1.20M/2.40M edges (50.0%) after
// 4s, 300K/s, about 4s left".
func (p *progress) logTextLocked(now time.Time) string {
	elapsed := elapsedText(now.Sub(p.start))
	if p.done == 0 && p.total <= 0 && p.detail == "" {
		return fmt.Sprintf("%s: running for %s", p.phase, elapsed)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", p.phase, p.amountLocked())
	if p.unit != "" && p.unit != "bytes" {
		b.WriteString(" " + p.unit)
	}
	b.WriteString(p.detail)
	if p.total > 0 {
		fmt.Fprintf(&b, " (%.1f%%)", 100*fraction(p.done, p.total))
	}
	fmt.Fprintf(&b, " after %s", elapsed)
	if r, ok := p.rate.rate(now); ok {
		b.WriteString(", " + p.rateText(r))
		if left, ok := timeLeft(p.done, p.total, r); ok && p.done < p.total {
			b.WriteString(", about " + durationText(left) + " left")
		}
	}
	return b.String()
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
	// Clear the bar line so the report starts on a clean line.
	p.clearBarLocked()
	p.phase = ""
}

func (p *progress) clearBarLocked() {
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", max(p.width-1, 20)))
		p.drawn = false
	}
}

func (p *progress) drawBarLocked(now time.Time) {
	fmt.Fprintf(p.w, "\r%s", p.barTextLocked(now))
	p.drawn = true
}

// barTextLocked is the bar line, padded to the terminal's width less one
// column: "count [=====     ]  50.0% 1.20M/2.40M 300K/s 4s left". The
// bar shrinks to leave room for the figures; without a total there is
// none, and without a rate yet the elapsed time stands for the rest.
func (p *progress) barTextLocked(now time.Time) string {
	cols := max(p.width-1, 20)
	tail := elapsedText(now.Sub(p.start))
	if r, ok := p.rate.rate(now); ok {
		tail = p.rateText(r)
		if left, ok := timeLeft(p.done, p.total, r); ok && p.done < p.total {
			tail += " " + durationText(left) + " left"
		}
	}
	line := fmt.Sprintf("%-10s %s %s", p.phase, p.amountLocked(), tail)
	if p.total > 0 {
		frac := fraction(p.done, p.total)
		figures := fmt.Sprintf(" %5.1f%% %s %s", 100*frac, p.amountLocked(), tail)
		width := min(30, cols-max(len(p.phase), 10)-3-len(figures))
		if width >= 8 {
			n := int(frac * float64(width))
			line = fmt.Sprintf("%-10s [%s%s]%s", p.phase, strings.Repeat("=", n), strings.Repeat(" ", width-n), figures)
		} else {
			line = fmt.Sprintf("%-10s%s", p.phase, figures)
		}
	}
	if len(line) > cols {
		line = line[:cols]
	}
	return fmt.Sprintf("%-*s", cols, line)
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
