package pb

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/trigrid/trigrid/api"
)

// FuzzDecode feeds arbitrary bytes to every decoder that takes a message
// from the network. A decoder must not panic; what it accepts must
// survive an encode-decode round trip unchanged.
func FuzzDecode(f *testing.F) {
	for _, m := range []proto.Message{
		&WorkerMessage{Msg: &WorkerMessage_Result{Result: EncodeResult(sampleResult())}},
		&WorkerMessage{Msg: &WorkerMessage_Results{Results: EncodeResults([]api.Result{sampleResult(), sampleResult()}, 3)}},
		&WorkerMessage{Msg: &WorkerMessage_Hello{Hello: &Hello{Protocol: api.Protocol, Worker: "w", Cores: 1, Slots: 1, Devices: []*Device{{Kind: "gpu", Memory: 1}}}}},
		&WorkerMessage{Msg: &WorkerMessage_Heartbeat{Heartbeat: &Heartbeat{Worker: "w", Running: []*SubtaskRef{{Job: "j"}}}}},
		&WorkerMessage{Msg: &WorkerMessage_Pull{Pull: &Pull{Max: 4}}},
		&CoordinatorMessage{Msg: &CoordinatorMessage_Assignments{Assignments: &Assignments{Items: []*Assignment{EncodeAssignment(sampleAssignment())}}}},
		&SubmitRequest{Graph: "g", Partitions: 4, Scheme: "hash"},
		&JobStatus{Job: "j", State: JobState_JOB_STATE_DONE, Subtasks: 1, Done: 1, Triangles: 7},
		EncodeStatus(sampleStatus()),
		&FetchShardRequest{Job: "j", Name: "manifest.json"},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var wm WorkerMessage
		if proto.Unmarshal(b, &wm) == nil {
			if r, err := DecodeResult(wm.GetResult()); err == nil {
				if back, err := DecodeResult(EncodeResult(r)); err != nil || !reflect.DeepEqual(back, r) {
					t.Fatalf("result round trip: %+v -> %+v, %v", r, back, err)
				}
			}
			if rs, pull, err := DecodeResults(wm.GetResults()); err == nil {
				if back, bpull, err := DecodeResults(EncodeResults(rs, pull)); err != nil || bpull != pull || !reflect.DeepEqual(back, rs) {
					t.Fatalf("results round trip: %+v -> %+v, %v", rs, back, err)
				}
			}
			if h, err := DecodeHello(wm.GetHello()); err == nil {
				if back, err := DecodeHello(EncodeHello(h)); err != nil || !reflect.DeepEqual(back, h) {
					t.Fatalf("hello round trip: %+v -> %+v, %v", h, back, err)
				}
			}
			if hb, err := DecodeHeartbeat(wm.GetHeartbeat()); err == nil {
				if back, err := DecodeHeartbeat(EncodeHeartbeat(hb)); err != nil || !reflect.DeepEqual(back, hb) {
					t.Fatalf("heartbeat round trip: %+v -> %+v, %v", hb, back, err)
				}
			}
			DecodePull(wm.GetPull())
		}
		var cm CoordinatorMessage
		if proto.Unmarshal(b, &cm) == nil {
			if as, err := DecodeAssignments(cm.GetAssignments()); err == nil {
				if back, err := DecodeAssignments(EncodeAssignments(as)); err != nil || !reflect.DeepEqual(back, as) {
					t.Fatalf("assignments round trip: %+v -> %+v, %v", as, back, err)
				}
			}
			DecodeCancel(cm.GetCancel())
			DecodeWelcome(cm.GetWelcome())
		}
		var sr SubmitRequest
		if proto.Unmarshal(b, &sr) == nil {
			if s, err := DecodeSubmit(&sr); err == nil {
				if back, err := DecodeSubmit(EncodeSubmit(s)); err != nil || back != s {
					t.Fatalf("submit round trip: %+v -> %+v, %v", s, back, err)
				}
			}
		}
		var js JobStatus
		if proto.Unmarshal(b, &js) == nil {
			if s, err := DecodeStatus(&js); err == nil {
				if back, err := DecodeStatus(EncodeStatus(s)); err != nil || !reflect.DeepEqual(back, s) {
					t.Fatalf("status round trip: %+v -> %+v, %v", s, back, err)
				}
			}
		}
		var fr FetchShardRequest
		if proto.Unmarshal(b, &fr) == nil {
			DecodeFetchShard(&fr)
		}
		var ch ShardChunk
		if proto.Unmarshal(b, &ch) == nil {
			CheckChunk(&ch, true, 0, 0)
			CheckChunk(&ch, false, ch.GetOffset(), ch.GetOffset()+fuzzChunkRoom)
		}
	})
}

const fuzzChunkRoom = 1 << 10
