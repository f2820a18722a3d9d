package pb

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/trigrid/trigrid/api"
)

func sampleWorkers() []api.WorkerInfo {
	t0 := time.UnixMilli(1_796_000_000_000)
	return []api.WorkerInfo{
		{Worker: "w1", Host: "10.0.0.7", Version: "v1.2", Devices: []api.Device{{Kind: "gpu", Name: "NVIDIA H200", Memory: 140 << 30}},
			Cores: 16, Slots: 1, State: api.WorkerBusy, Running: 1, Counted: 12, Failed: 1, Heard: 250 * time.Millisecond,
			Stats: api.WorkerStats{Worker: "w1", Subtasks: 12, Fetch: time.Second, Decode: 2 * time.Second, Upload: 3, KernelTime: 4 * time.Second,
				Busy: 5 * time.Second, Wall: 9 * time.Second, Edges: 1 << 40, FirstStart: t0, LastEnd: t0.Add(9 * time.Second),
				Devices: []api.DeviceStats{{Device: 0, Subtasks: 12, Busy: 5 * time.Second}}}},
		{Worker: "w2", State: api.WorkerLost, Left: "membership: dead", Heard: time.Minute, Faulty: "outvoted", Stats: api.WorkerStats{Worker: "w2"}},
	}
}

func TestWorkersRoundTrip(t *testing.T) {
	ws := sampleWorkers()
	b, err := proto.Marshal(EncodeWorkers(ws))
	if err != nil {
		t.Fatal(err)
	}
	var m ListWorkersResponse
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	back, err := DecodeWorkers(&m)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, ws) {
		t.Fatalf("round trip\n got %+v\nwant %+v", back, ws)
	}
	if ws, err := DecodeWorkers(&ListWorkersResponse{}); err != nil || len(ws) != 0 {
		t.Fatalf("no workers: %v %v", ws, err)
	}
}

// The encoder sends only what the decoder takes: texts with control
// characters or invalid UTF-8 are cleaned, long ones cut.
func TestWorkersEncodeCleans(t *testing.T) {
	w := api.WorkerInfo{Worker: "w", State: api.WorkerLost, Left: "stream broke:\nread: \x00\xff" + strings.Repeat("x", 2*api.MaxErrorLen),
		Devices: []api.Device{{Kind: "gpu", Name: "a\x1bb"}}}
	back, err := DecodeWorkers(EncodeWorkers([]api.WorkerInfo{w}))
	if err != nil {
		t.Fatal(err)
	}
	if l := back[0].Left; !strings.HasPrefix(l, "stream broke: read:  \uFFFD") || len(l) > api.MaxErrorLen || back[0].Devices[0].Name != "a b" {
		t.Fatalf("cleaned %q, device %q", l[:40], back[0].Devices[0].Name)
	}
}

func TestWorkersDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*WorkerInfo)
		want string
	}{
		{"nil", nil, "workers[0]: message is missing"},
		{"id", func(m *WorkerInfo) { m.Worker = "a b" }, "workers[0].worker"},
		{"state", func(m *WorkerInfo) { m.State = "asleep" }, "workers[0].state"},
		{"negative", func(m *WorkerInfo) { m.Counted = -1 }, "workers[0].counted"},
		{"slots", func(m *WorkerInfo) { m.Slots = api.MaxBatch + 1 }, "workers[0].slots"},
		{"heard", func(m *WorkerInfo) { m.HeardNs = -5 }, "workers[0].heard_ns"},
		{"control", func(m *WorkerInfo) { m.Left = "a\nb" }, "workers[0].left"},
		{"device", func(m *WorkerInfo) { m.Devices = []*Device{nil} }, "workers[0].devices[0]"},
		{"memory", func(m *WorkerInfo) { m.Devices = []*Device{{Kind: "gpu", Memory: -1}} }, "workers[0].devices[0].memory"},
		{"stats of another", func(m *WorkerInfo) { m.Stats.Worker = "w9" }, "workers[0].stats.worker"},
		{"stats negative", func(m *WorkerInfo) { m.Stats.KernelNs = -1 }, "workers[0].stats.kernel_ns"},
	} {
		m := EncodeWorkers(sampleWorkers()[:1])
		if tc.edit == nil {
			m.Workers[0] = nil
		} else {
			tc.edit(m.Workers[0])
		}
		_, err := DecodeWorkers(m)
		if err == nil || !strings.Contains(err.Error(), "ListWorkersResponse."+tc.want) {
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
	if _, err := DecodeWorkers(nil); err == nil {
		t.Error("a missing answer decoded")
	}
}

// FuzzDecodeWorkers: the decoder never panics on bytes from the network,
// and what it accepts survives an encode-decode round trip.
func FuzzDecodeWorkers(f *testing.F) {
	b, err := proto.Marshal(EncodeWorkers(sampleWorkers()))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m ListWorkersResponse
		if proto.Unmarshal(b, &m) != nil {
			return
		}
		ws, err := DecodeWorkers(&m)
		if err != nil {
			return
		}
		back, err := DecodeWorkers(EncodeWorkers(ws))
		if err != nil || !reflect.DeepEqual(back, ws) {
			t.Fatalf("round trip: %+v -> %+v, %v", ws, back, err)
		}
	})
}
