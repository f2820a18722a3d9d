package gpu

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/kernels"
)

// TestSelectDevices picks GPUs by index through the reference library,
// which shows one device.
func TestSelectDevices(t *testing.T) {
	good, _ := refLibs(t)
	opts := SelectOptions{Library: Options{Path: good}}
	sel, err := Select("gpu", "polak", opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Slots) != 1 || sel.Slots[0].GPU == nil || sel.Slots[0].GPU.Index != 0 || sel.Device != "reference" {
		t.Fatalf("all devices: %+v", sel)
	}
	c, err := sel.Slots[0].New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.(*Counter).Close()
	g := forward(t, randomEdges(200, 2000, 3))
	r, err := c.Count(context.Background(), kernels.Whole(g))
	if err != nil {
		t.Fatal(err)
	}
	if want := mustReference(t, kernels.Whole(g)); r.Triangles != want {
		t.Fatalf("slot 0 counted %d, want %d", r.Triangles, want)
	}
	// Another kernel on the same slot: a GPU kernel on the GPU, a CPU
	// kernel on the host.
	for k, want := range map[string]string{"trix": "trix", "merge": "merge"} {
		c, err := sel.Slots[0].NewKernel(k)
		if err != nil || c.Name() != want {
			t.Fatalf("NewKernel(%s) = %v, %v", k, c, err)
		}
		r, err := c.Count(context.Background(), kernels.Whole(g))
		if err != nil || r.Triangles != mustReference(t, kernels.Whole(g)) {
			t.Fatalf("NewKernel(%s) counted %d, %v", k, r.Triangles, err)
		}
		if gc, ok := c.(*Counter); ok {
			gc.Close()
		}
	}
	opts.Devices = []int{0}
	if sel, err := Select("gpu", "polak", opts); err != nil || len(sel.Slots) != 1 {
		t.Fatalf("devices [0]: %+v, %v", sel, err)
	}
	for _, bad := range [][]int{{1}, {-1}, {0, 0}} {
		opts.Devices = bad
		if _, err := Select("gpu", "polak", opts); err == nil {
			t.Fatalf("devices %v accepted with one GPU", bad)
		}
	}
	// auto falls back to the CPU when the devices asked for are not there.
	opts.Devices = []int{3}
	sel, err = Select("auto", "polak", opts)
	if err != nil || sel.Device != "cpu" || len(sel.Slots) != 1 {
		t.Fatalf("auto with a missing device: %+v, %v", sel, err)
	}
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.NewCounterOn(2, "polak"); !errors.Is(err, ErrNoDevice) || !strings.Contains(err.Error(), "device 2") {
		t.Fatalf("NewCounterOn(2) = %v, want ErrNoDevice naming device 2", err)
	}
}
