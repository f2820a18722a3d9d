//go:build !race

package edgeio

const raceEnabled = false
