//go:build race

package main

// raceEnabled: the race detector's shadow memory adds to every process's
// resident memory.
const raceEnabled = true
