package pb

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/api"
	"google.golang.org/protobuf/proto"
)

func sampleAssignment() api.Assignment {
	return api.Assignment{
		Ref: api.SubtaskRef{Job: "job-1", Index: 63}, Attempt: 2, I: 3, J: 1, K: 2,
		Clip: true, TailOffset: 17, Edges: 1000, Work: 5000, Store: "file:///data/g.shards", Kernel: "hash",
	}
}

func sampleResult() api.Result {
	return api.Result{
		Ref: api.SubtaskRef{Job: "job-1", Index: 5}, Attempt: 1, Worker: "w-3",
		Triangles: 1<<64 - 1, Kernel: "auto (wetric)",
		Fetch: time.Millisecond, Decode: 2 * time.Millisecond, KernelTime: 3 * time.Millisecond,
	}
}

// viaWire sends m through its wire bytes into out.
func viaWire(t *testing.T, m proto.Message, out proto.Message) {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// Every encode of a worker-facing message goes through the wire bytes and
// back.
func TestRoundTrip(t *testing.T) {
	wire := func(m proto.Message, out proto.Message) { t.Helper(); viaWire(t, m, out) }
	a := sampleAssignment()
	var am Assignment
	wire(EncodeAssignment(a), &am)
	if got, err := DecodeAssignment(&am); err != nil || !reflect.DeepEqual(got, a) {
		t.Errorf("assignment: got %+v, %v; want %+v", got, err, a)
	}
	for _, off := range []int64{-1 << 33, -1, 1 << 33} { // partition's clip offsets
		ca := sampleAssignment()
		ca.TailOffset = off
		if got, err := DecodeAssignment(EncodeAssignment(ca)); err != nil || !reflect.DeepEqual(got, ca) {
			t.Errorf("tail offset %d: got %+v, %v", off, got, err)
		}
	}
	far := EncodeAssignment(sampleAssignment())
	far.TailOffset = 1 << 40
	if _, err := DecodeAssignment(far); err == nil || !strings.Contains(err.Error(), "tail_offset") {
		t.Errorf("tail offset 2^40: %v", err)
	}
	pa := sampleAssignment()
	pa.PerVertex, pa.PerEdge = true, true
	if got, err := DecodeAssignment(EncodeAssignment(pa)); err != nil || !reflect.DeepEqual(got, pa) {
		t.Errorf("per-vertex assignment: got %+v, %v; want %+v", got, err, pa)
	}
	pr := sampleResult()
	pr.Partial = &api.Partial{VI: []uint64{1, 2}, VJ: []uint64{3}, VK: []uint64{4, 5, 6}, EIJ: []uint64{7}, EIK: []uint64{8}, EJK: []uint64{9}}
	var prm Result
	wire(EncodeResult(pr), &prm)
	if got, err := DecodeResult(&prm); err != nil || !reflect.DeepEqual(got, pr) {
		t.Errorf("partial result: got %+v, %v; want %+v", got, err, pr)
	}
	// A block without edges has an empty per-edge list, which protobuf
	// sends as no list at all; it comes back empty, not missing.
	for _, empty := range []int{0, 1, 2} {
		er := sampleResult()
		e := [3][]uint64{{7, 1}, {8}, {9, 0, 2}}
		e[empty] = []uint64{}
		er.Partial = &api.Partial{VI: []uint64{1, 2}, VJ: []uint64{3}, VK: []uint64{4, 5, 6}, EIJ: e[0], EIK: e[1], EJK: e[2]}
		var erm Result
		wire(EncodeResult(er), &erm)
		got, err := DecodeResult(&erm)
		if err != nil || got.Partial == nil || !reflect.DeepEqual(got, er) {
			t.Errorf("per-edge partial with block %d empty: got %+v, %v; want %+v", empty, got.Partial, err, er.Partial)
			continue
		}
		if g := [3][]uint64{got.Partial.EIJ, got.Partial.EIK, got.Partial.EJK}; g[empty] == nil {
			t.Errorf("per-edge partial with block %d empty: its list came back nil", empty)
		}
	}
	vr := sampleResult()
	vr.Partial = &api.Partial{VI: []uint64{1}, VJ: []uint64{}, VK: []uint64{2}}
	if got, err := DecodeResult(EncodeResult(vr)); err != nil || got.Partial == nil || got.Partial.EIJ != nil || got.Partial.EIK != nil || got.Partial.EJK != nil {
		t.Errorf("per-vertex partial: got %+v, %v; want no per-edge lists", got.Partial, err)
	}
	hr := api.Result{Ref: api.SubtaskRef{Job: "j", Index: 1}, Attempt: 1, Worker: "w", HandedBack: true, Err: "draining"}
	if got, err := DecodeResult(EncodeResult(hr)); err != nil || !reflect.DeepEqual(got, hr) {
		t.Errorf("handed back: got %+v, %v", got, err)
	}
	r := sampleResult()
	var rm Result
	wire(EncodeResult(r), &rm)
	if got, err := DecodeResult(&rm); err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("result: got %+v, %v; want %+v", got, err, r)
	}
	h := api.Hello{Worker: "w-1", Version: "v0.1", Devices: []api.Device{{Kind: "gpu", Name: "NVIDIA H200", Memory: 140 << 30}, {Kind: "cpu", Name: "cpu"}}, Kernels: []string{"auto", "wetric"}, Cores: 16, Slots: 2}
	var hm Hello
	wire(EncodeHello(h), &hm)
	if got, err := DecodeHello(&hm); err != nil || !reflect.DeepEqual(got, h) {
		t.Errorf("hello: got %+v, %v; want %+v", got, err, h)
	}
	hb := api.Heartbeat{Worker: "w-1", Running: []api.SubtaskRef{{Job: "j", Index: 1}, {Job: "j", Index: 2}}}
	var hbm Heartbeat
	wire(EncodeHeartbeat(hb), &hbm)
	if got, err := DecodeHeartbeat(&hbm); err != nil || !reflect.DeepEqual(got, hb) {
		t.Errorf("heartbeat: got %+v, %v; want %+v", got, err, hb)
	}
	w := api.Welcome{Version: "v", Heartbeat: time.Second, Lease: 10 * time.Second}
	if got, err := DecodeWelcome(EncodeWelcome(w)); err != nil || got != w {
		t.Errorf("welcome: got %+v, %v", got, err)
	}
	c := api.Cancel{Ref: api.SubtaskRef{Job: "j", Index: 9}, Attempt: 3, Reason: "duplicate"}
	if got, err := DecodeCancel(EncodeCancel(c)); err != nil || got != c {
		t.Errorf("cancel: got %+v, %v", got, err)
	}
	as := []api.Assignment{a, a}
	if got, err := DecodeAssignments(EncodeAssignments(as)); err != nil || !reflect.DeepEqual(got, as) {
		t.Errorf("assignments: got %+v, %v", got, err)
	}
}

// Every encode of a job-facing message goes through the wire bytes and
// back.
func TestRoundTripJobs(t *testing.T) {
	wire := func(m proto.Message, out proto.Message) { t.Helper(); viaWire(t, m, out) }
	spec := api.JobSpec{Graph: "/data/g.txt", Partitions: 4, Scheme: "range", Kernel: "merge"}
	if got, err := DecodeSubmit(EncodeSubmit(spec)); err != nil || got != spec {
		t.Errorf("submit: got %+v, %v", got, err)
	}
	pvs := api.JobSpec{Shards: "file:///s", PerVertex: true, PerEdge: true}
	if got, err := DecodeSubmit(EncodeSubmit(pvs)); err != nil || got != pvs {
		t.Errorf("per-vertex submit: got %+v, %v", got, err)
	}
	if got, err := DecodeSubmit(&SubmitRequest{Shards: "s", PerEdge: true}); err != nil || !got.PerVertex {
		t.Errorf("per-edge submit: got %+v, %v; want per-vertex implied", got, err)
	}
	if id, edges, err := DecodeFetchCounts(&FetchCountsRequest{Job: "j-1", Edges: true}); err != nil || id != "j-1" || !edges {
		t.Errorf("fetch counts: got %s %v %v", id, edges, err)
	}
	if _, _, err := DecodeFetchCounts(&FetchCountsRequest{}); err == nil || !strings.Contains(err.Error(), "job") {
		t.Errorf("fetch counts without a job: %v", err)
	}
	st := api.JobStatus{
		Job: "job-1", State: api.JobDone, Source: "/g", Partitions: 4, Scheme: "hash",
		Subtasks: 64, Done: 64, Attempts: 70, Requeued: 5, Speculated: 1, Workers: 4, Recounted: 2,
		Triangles: 1 << 40, Created: time.UnixMilli(1700000000000), Elapsed: time.Second,
		Faulty: []api.FaultyWorker{{Worker: "w-2", Reason: "subtask 3 counted 5, recount 4"}},
	}
	var sm JobStatus
	wire(EncodeStatus(st), &sm)
	if got, err := DecodeStatus(&sm); err != nil || !reflect.DeepEqual(got, st) {
		t.Errorf("status: got %+v, %v; want %+v", got, err, st)
	}
}

// refusal is a message a decoder must refuse, with the field its error
// must name.
type refusal struct {
	name  string
	field string // must appear in the error
	err   func() error
}

// workerRefusals are worker-facing messages the decoders refuse.
func workerRefusals() []refusal {
	long := strings.Repeat("x", api.MaxNameLen+1)
	return []refusal{
		{"nil assignment", "Assignment", func() error { _, err := DecodeAssignment(nil); return err }},
		{"assignment without ref", "ref", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.Ref = nil
			_, err := DecodeAssignment(m)
			return err
		}},
		{"negative index", "index", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.Ref.Index = -1
			_, err := DecodeAssignment(m)
			return err
		}},
		{"job id with slash", "job", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.Ref.Job = "../x"
			_, err := DecodeAssignment(m)
			return err
		}},
		{"attempt 0", "attempt", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.Attempt = 0
			_, err := DecodeAssignment(m)
			return err
		}},
		{"block out of range", "k", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.K = api.MaxPartitions
			_, err := DecodeAssignment(m)
			return err
		}},
		{"negative work", "work", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.Work = -1
			_, err := DecodeAssignment(m)
			return err
		}},
		{"store with newline", "store", func() error {
			m := EncodeAssignment(sampleAssignment())
			m.Store = "a\nb"
			_, err := DecodeAssignment(m)
			return err
		}},
		{"empty batch", "items", func() error { _, err := DecodeAssignments(&Assignments{}); return err }},
		{"huge batch", "items", func() error {
			_, err := DecodeAssignments(&Assignments{Items: make([]*Assignment, api.MaxBatch+1)})
			return err
		}},
		{"result worker too long", "worker", func() error {
			m := EncodeResult(sampleResult())
			m.Worker = long
			_, err := DecodeResult(m)
			return err
		}},
		{"failed result with count", "triangles", func() error {
			m := EncodeResult(sampleResult())
			m.Error = "boom"
			_, err := DecodeResult(m)
			return err
		}},
		{"handed back without why", "error", func() error {
			m := EncodeResult(sampleResult())
			m.Triangles, m.HandedBack = 0, true
			_, err := DecodeResult(m)
			return err
		}},
		{"negative kernel time", "kernel_ns", func() error {
			m := EncodeResult(sampleResult())
			m.KernelNs = -5
			_, err := DecodeResult(m)
			return err
		}},
		{"hello other protocol", "protocol", func() error {
			m := EncodeHello(api.Hello{Worker: "w", Cores: 1, Slots: 1})
			m.Protocol = 99
			_, err := DecodeHello(m)
			return err
		}},
		{"hello zero slots", "slots", func() error { _, err := DecodeHello(EncodeHello(api.Hello{Worker: "w", Cores: 1})); return err }},
		{"hello bad device kind", "kind", func() error {
			_, err := DecodeHello(EncodeHello(api.Hello{Worker: "w", Cores: 1, Slots: 1, Devices: []api.Device{{Kind: "tpu"}}}))
			return err
		}},
		{"hello too many kernels", "kernels", func() error {
			_, err := DecodeHello(EncodeHello(api.Hello{Worker: "w", Cores: 1, Slots: 1, Kernels: make([]string, api.MaxKernels+1)}))
			return err
		}},
		{"heartbeat too many", "running", func() error {
			_, err := DecodeHeartbeat(&Heartbeat{Worker: "w", Running: make([]*SubtaskRef, api.MaxBatch+1)})
			return err
		}},
		{"pull zero", "max", func() error { _, err := DecodePull(&Pull{}); return err }},
		{"pull huge", "max", func() error { _, err := DecodePull(&Pull{Max: 1 << 30}); return err }},
		{"welcome heartbeat past lease", "heartbeat", func() error {
			_, err := DecodeWelcome(&Welcome{HeartbeatNs: 10, LeaseNs: 5})
			return err
		}},
		{"fetch traversal", "name", func() error {
			_, _, err := DecodeFetchShard(&FetchShardRequest{Job: "j", Name: "../../etc/passwd"})
			return err
		}},
		{"fetch hidden", "name", func() error { _, _, err := DecodeFetchShard(&FetchShardRequest{Job: "j", Name: ".tmp-x"}); return err }},
	}
}

// jobRefusals are job-facing messages the decoders refuse.
func jobRefusals() []refusal {
	return []refusal{
		{"submit both", "graph", func() error { _, err := DecodeSubmit(&SubmitRequest{Graph: "g", Shards: "s"}); return err }},
		{"submit neither", "graph", func() error { _, err := DecodeSubmit(&SubmitRequest{}); return err }},
		{"submit P too big", "partitions", func() error {
			_, err := DecodeSubmit(&SubmitRequest{Graph: "g", Partitions: api.MaxPartitions + 1})
			return err
		}},
		{"submit scheme", "scheme", func() error { _, err := DecodeSubmit(&SubmitRequest{Graph: "g", Scheme: "zigzag"}); return err }},
		{"submit kernel path", "kernel", func() error { _, err := DecodeSubmit(&SubmitRequest{Graph: "g", Kernel: "a/b"}); return err }},
		{"status unknown state", "state", func() error { _, err := DecodeStatus(&JobStatus{Job: "j"}); return err }},
		{"status counts exceed", "subtasks", func() error {
			_, err := DecodeStatus(&JobStatus{Job: "j", State: JobState_JOB_STATE_RUNNING, Subtasks: 4, Done: 5})
			return err
		}},
		{"status job id", "job", func() error { _, err := DecodeJobID("StatusRequest", "a b"); return err }},
	}
}

func TestDecodeRefuses(t *testing.T) {
	cases := append(workerRefusals(), jobRefusals()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			if err == nil {
				t.Fatal("decoded, want an error")
			}
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("error %q does not name %q", err, c.field)
			}
		})
	}
}

func TestCheckChunk(t *testing.T) {
	if err := CheckChunk(&ShardChunk{Size: 10, Data: make([]byte, 6)}, true, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := CheckChunk(&ShardChunk{Offset: 6, Data: make([]byte, 4)}, false, 6, 10); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name  string
		m     *ShardChunk
		first bool
		want  int64
		size  int64
	}{
		{"size too big", &ShardChunk{Size: api.MaxFileSize + 1}, true, 0, 0},
		{"negative size", &ShardChunk{Size: -1}, true, 0, 0},
		{"past the end", &ShardChunk{Offset: 6, Data: make([]byte, 5)}, false, 6, 10},
		{"wrong offset", &ShardChunk{Offset: 7, Data: make([]byte, 1)}, false, 6, 10},
		{"size again", &ShardChunk{Size: 10, Offset: 6}, false, 6, 10},
		{"chunk too big", &ShardChunk{Size: api.MaxFileSize, Data: make([]byte, api.MaxChunk+1)}, true, 0, 0},
	}
	for _, c := range bad {
		if err := CheckChunk(c.m, c.first, c.want, c.size); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
