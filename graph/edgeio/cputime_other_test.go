//go:build !linux

package edgeio

import "time"

// processCPU is not measured here; benchmarks then report 0.
func processCPU() time.Duration { return 0 }
