package main

import (
	"fmt"
	"math"
	"time"
)

// The rate of a phase is measured over its last rateWindow, from samples
// taken at most every rateSpacing: long enough to smooth out bursty
// updates (a subtask that settles a block at a time), short enough to
// follow a change of pace. No rate is shown before minRateSpan has
// passed, when a few updates say little.
const (
	rateWindow  = 10 * time.Second
	rateSpacing = 250 * time.Millisecond
	minRateSpan = time.Second
)

// rateSample is a phase's amount done at a time.
type rateSample struct {
	t    time.Time
	done int64
}

// rateMeter estimates the pace of a phase from its updates. Its samples
// are spaced at least rateSpacing apart, oldest first, the first being
// the last one at or before the window's start (the base); latest is the
// latest update. It keeps at most rateWindow/rateSpacing + 2 samples.
type rateMeter struct {
	samples []rateSample
	latest  rateSample
}

// reset starts a phase at t with nothing done.
func (m *rateMeter) reset(t time.Time) {
	m.latest = rateSample{t: t}
	m.samples = append(m.samples[:0], m.latest)
}

// add records that done was reached at t (t never before the last
// sample's time).
func (m *rateMeter) add(t time.Time, done int64) {
	m.latest = rateSample{t: t, done: done}
	if n := len(m.samples); n == 0 || t.Sub(m.samples[n-1].t) >= rateSpacing {
		m.samples = append(m.samples, m.latest)
	}
	for len(m.samples) > 1 && !m.samples[1].t.After(t.Add(-rateWindow)) {
		m.samples = m.samples[1:]
	}
}

// rate returns the units done per second between the base sample and now
// (so a phase that stops advancing slows down rather than keeping its
// last pace), and false until minRateSpan has passed since the base or
// while nothing advanced.
func (m *rateMeter) rate(now time.Time) (float64, bool) {
	if len(m.samples) == 0 {
		return 0, false
	}
	base := m.samples[0]
	span := now.Sub(base.t)
	if span < minRateSpan || m.latest.done <= base.done {
		return 0, false
	}
	return float64(m.latest.done-base.done) / span.Seconds(), true
}

// maxTimeLeft bounds the estimates shown; beyond it a rate says nothing
// useful.
const maxTimeLeft = 100 * 24 * time.Hour

// timeLeft estimates the time to finish total at rate units per second
// with done reached; false when there is no total or rate, or the
// estimate is beyond maxTimeLeft.
func timeLeft(done, total int64, rate float64) (time.Duration, bool) {
	if total <= 0 || rate <= 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
		return 0, false
	}
	if done >= total {
		return 0, true
	}
	secs := float64(total-done) / rate
	if secs > maxTimeLeft.Seconds() {
		return 0, false
	}
	return time.Duration(math.Ceil(secs)) * time.Second, true
}

// durationText writes a time left the way people read one: "45s",
// "4m05s", "2h03m".
func durationText(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// elapsedText writes a phase's running time: to a tenth of a second
// under a minute ("4.2s"), as durationText beyond.
func elapsedText(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return durationText(d)
}

// rateText writes a rate in the phase's unit: "12.3 MiB/s" for bytes,
// "300K/s" or "2.5/s" otherwise.
func (p *progress) rateText(r float64) string {
	if p.unit == "bytes" {
		return humanBytes(int64(r)) + "/s"
	}
	if r < 10 {
		return fmt.Sprintf("%.1f/s", r)
	}
	return humanCount(r) + "/s"
}

// fraction is done/total clamped to [0, 1].
func fraction(done, total int64) float64 {
	if total <= 0 || done <= 0 {
		return 0
	}
	return min(float64(done)/float64(total), 1)
}
