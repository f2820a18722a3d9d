package scheduler

import "fmt"

// Config tunes the scheduler. Durations are in ticks; the caller decides
// what a tick is (coordinator.Config.TickInterval in the service).
type Config struct {
	// LeaseTicks is how long an attempt stays assigned without a
	// heartbeat naming it; when it lapses the attempt is presumed lost,
	// the subtask is requeued and the worker gets no more work until it
	// pulls, heartbeats or answers again. Longer leases tolerate slow
	// networks and long pauses but leave a stalled worker's subtasks idle
	// longer. 0 means the default.
	LeaseTicks int64
	// MaxAttempts is how many attempts of one subtask may fail (an error
	// result, a lapsed lease, the worker leaving) before its job fails
	// with an error naming the subtask and the workers that tried.
	// Attempts handed back by a draining worker, speculative copies that
	// lose, and recounts do not count. 0 means the default.
	MaxAttempts int
	// NoSpeculation turns off re-offering stragglers to idle workers.
	NoSpeculation bool
	// NoFairShare lets a pull take all the outstanding work it asks for;
	// by default a worker holds at most its slots' share of it (see
	// fairShare in pick.go).
	NoFairShare bool
	// SpeculateAfter is the fraction of a job's subtasks that must be done
	// before stragglers are re-offered; the done subtasks give the median
	// time per unit of estimated work. 0 means the default.
	SpeculateAfter float64
	// SpeculateFactor: an attempt is a straggler when it has run longer
	// than this many times its estimate (median time per work unit times
	// the subtask's Work). 0 means the default.
	SpeculateFactor float64
	// SpeculateMinTicks: attempts younger than this are never re-offered,
	// so that subtasks shorter than a few ticks (whose measured times are
	// mostly rounding) are not duplicated. 0 means the default.
	SpeculateMinTicks int64
	// Verify counts every subtask on two different workers and accepts it
	// only when both agree (a disagreement is settled by a third). It
	// doubles the work; it catches silent faults that speculation and
	// duplicates catch only by chance.
	Verify bool
	// RecountWaitTicks is how long a subtask that only a worker that has
	// not yet counted it may take (a verification copy, a recount after a
	// disagreement) waits while no connected worker qualifies, before its
	// job fails saying so. 0 means the default.
	RecountWaitTicks int64
}

// DefaultConfig returns the defaults: 100-tick leases, 4 attempts,
// speculation of attempts running 1.5x past their estimate once 75% of a
// job is done (as Spark), no verification of every subtask.
func DefaultConfig() Config {
	return Config{
		// A tick is 100 ms in the service by default, so the lease is
		// 10 s: ten missed one-second heartbeats (Ray declares a node
		// dead after five missed three-second checks; ours is shorter
		// because a lost attempt costs a whole subtask's time).
		LeaseTicks:        100,
		MaxAttempts:       4, // Hadoop's mapreduce.map.maxattempts
		SpeculateAfter:    0.75,
		SpeculateFactor:   1.5, // Spark's spark.speculation.multiplier
		SpeculateMinTicks: 20,
		RecountWaitTicks:  300,
	}
}

// Validate fills zero fields with defaults and rejects impossible values.
func (c *Config) Validate() error {
	d := DefaultConfig()
	if c.LeaseTicks == 0 {
		c.LeaseTicks = d.LeaseTicks
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.SpeculateAfter == 0 {
		c.SpeculateAfter = d.SpeculateAfter
	}
	if c.SpeculateFactor == 0 {
		c.SpeculateFactor = d.SpeculateFactor
	}
	if c.SpeculateMinTicks == 0 {
		c.SpeculateMinTicks = d.SpeculateMinTicks
	}
	if c.RecountWaitTicks == 0 {
		c.RecountWaitTicks = d.RecountWaitTicks
	}
	switch {
	case c.LeaseTicks < 0:
		return fmt.Errorf("coordinator: lease of %d ticks: must be positive", c.LeaseTicks)
	case c.MaxAttempts < 0:
		return fmt.Errorf("coordinator: max attempts %d: must be positive", c.MaxAttempts)
	case c.SpeculateAfter < 0 || c.SpeculateAfter > 1:
		return fmt.Errorf("coordinator: speculate after %v: must be a fraction in (0, 1]", c.SpeculateAfter)
	case c.SpeculateFactor < 1:
		return fmt.Errorf("coordinator: speculation factor %v: must be at least 1", c.SpeculateFactor)
	case c.SpeculateMinTicks < 0:
		return fmt.Errorf("coordinator: speculation minimum of %d ticks: must be positive", c.SpeculateMinTicks)
	case c.RecountWaitTicks < 0:
		return fmt.Errorf("coordinator: recount wait of %d ticks: must be positive", c.RecountWaitTicks)
	}
	return nil
}
