//go:build race

package graph

// raceEnabled shrinks the larger tests under the race detector, which
// slows them about tenfold.
const raceEnabled = true
