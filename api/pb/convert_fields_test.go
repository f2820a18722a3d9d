package pb

import (
	"strings"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// A hello's instance and a job's reading options survive the wire, and
// what they may not be is refused.
func TestInstanceAndReadingOptions(t *testing.T) {
	h := api.Hello{Worker: "w", Version: "v", Cores: 1, Slots: 1, Instance: "0123abcd"}
	got, err := DecodeHello(EncodeHello(h))
	if err != nil || got.Instance != h.Instance {
		t.Fatalf("hello round trip: %+v, %v", got, err)
	}
	bad := EncodeHello(h)
	bad.Instance = "../x"
	if _, err := DecodeHello(bad); err == nil || !strings.Contains(err.Error(), "instance") {
		t.Errorf("instance ../x: %v", err)
	}
	spec := api.JobSpec{Graph: "g.mtx", Format: "mtx", SkipBadLines: true}
	if got, err := DecodeSubmit(EncodeSubmit(spec)); err != nil || got.Format != "mtx" || !got.SkipBadLines {
		t.Errorf("submit round trip: %+v, %v", got, err)
	}
	for _, m := range []*SubmitRequest{
		{Graph: "g", Format: "nosuch"},
		{Shards: "s", Format: "mtx"},
		{Shards: "s", SkipBadLines: true},
	} {
		if _, err := DecodeSubmit(m); err == nil || !strings.Contains(err.Error(), "format") {
			t.Errorf("DecodeSubmit(%v): %v, want a refusal naming the format field", m, err)
		}
	}
}
