package pipeline

import (
	"strings"
	"testing"

	"github.com/trigrid/trigrid/kernels/gpu"
)

// TestSlotsOfOtherKernels: a slot counts with the selection's kernel by
// default and with another CPU kernel when an assignment names one; a GPU
// kernel on the CPU slot is an error naming it.
func TestSlotsOfOtherKernels(t *testing.T) {
	sel, err := gpu.Select("cpu", "hash", gpu.SelectOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	slots := SlotsOf(sel)
	if len(slots) != 1 || slots[0].Device.Kind != "cpu" {
		t.Fatalf("slots %+v", slots)
	}
	for kernel, want := range map[string]string{"": "hash", "hash": "hash", "merge": "merge", "reference": "reference"} {
		c, err := slots[0].NewCounter(kernel)
		if err != nil || c.Name() != want {
			t.Fatalf("NewCounter(%q) = %v, %v; want %s", kernel, c, err, want)
		}
	}
	if _, err := slots[0].NewCounter("wetric"); err == nil || !strings.Contains(err.Error(), "wetric") {
		t.Fatalf("a GPU kernel on the CPU slot: %v", err)
	}
	if _, err := slots[0].NewCounter("nosuch"); err == nil {
		t.Fatal("an unknown kernel was accepted")
	}
}
