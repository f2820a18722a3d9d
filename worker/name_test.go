package worker

import (
	"testing"

	"github.com/trigrid/trigrid/api"
)

// Workers of one host started without names get distinct ones: by GPU
// index where the indexes are the host's own, else by process id.
func TestDefaultName(t *testing.T) {
	for _, c := range []struct {
		host    string
		devices []int
		visible string
		pid     int
		want    api.WorkerID
	}{
		{"node1", nil, "", 42, "node1-pid42"},
		{"node1", []int{0}, "", 42, "node1-gpu0"},
		{"node1", []int{2, 3}, "", 42, "node1-gpu2_3"},
		// srun gives each task CUDA_VISIBLE_DEVICES; index 0 is then a
		// different GPU in each, so the index names nothing.
		{"node1", []int{0}, "1", 42, "node1-pid42"},
		{"", nil, "", 7, "worker-pid7"},
		{"a b/c", nil, "", 7, "a-b-c-pid7"},
	} {
		got := DefaultName(c.host, c.devices, c.visible, c.pid)
		if got != c.want {
			t.Errorf("DefaultName(%q, %v, %q, %d) = %q, want %q", c.host, c.devices, c.visible, c.pid, got, c.want)
		}
		if err := api.CheckID("name", string(got)); err != nil {
			t.Errorf("DefaultName(%q, ...) = %q: %v", c.host, got, err)
		}
	}
	if a, b := NewInstance(), NewInstance(); a == b || api.CheckID("instance", a) != nil {
		t.Errorf("instances %q and %q", a, b)
	}
}

// A worker says the same instance in every hello, and two workers say
// different ones.
func TestHelloInstance(t *testing.T) {
	mk := func() *Worker {
		cfg := DefaultConfig()
		cfg.Conn = newFakeConn(nil)
		cfg.Slots = cpuSlots(1, "auto")
		w, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	a, b := mk(), mk()
	first, again := a.Hello().Instance, a.Hello().Instance
	if first == "" || first != again || first == b.Hello().Instance {
		t.Errorf("instances %q, %q, %q", first, again, b.Hello().Instance)
	}
}
