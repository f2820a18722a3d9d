//go:build race

package gen

// raceEnabled skips the Graph500-size check under the race detector,
// which slows it about tenfold.
const raceEnabled = true
