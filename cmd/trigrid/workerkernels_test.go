package main

import (
	"slices"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// A worker offers the kernels of the devices it counts on, its own first:
// GPU kernels on GPUs, CPU kernels on the CPU.
func TestWorkerKernels(t *testing.T) {
	gpuK := workerKernels("trix", []api.Device{{Kind: "gpu"}, {Kind: "gpu"}})
	cpuK := workerKernels("merge", []api.Device{{Kind: "cpu"}})
	if gpuK[0] != "trix" || !slices.Contains(gpuK, "wetric") || !slices.Contains(gpuK, "polak") || slices.Contains(gpuK, "merge") {
		t.Errorf("GPU worker offers %v", gpuK)
	}
	if cpuK[0] != "merge" || !slices.Contains(cpuK, "hash") || !slices.Contains(cpuK, "reference") || slices.Contains(cpuK, "wetric") {
		t.Errorf("CPU worker offers %v", cpuK)
	}
	for _, ks := range [][]string{gpuK, cpuK} {
		seen := map[string]bool{}
		for _, k := range ks {
			if seen[k] {
				t.Errorf("%v lists %s twice", ks, k)
			}
			seen[k] = true
		}
	}
}
