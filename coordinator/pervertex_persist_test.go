package coordinator

import (
	"reflect"
	"testing"

	"github.com/trigrid/trigrid/api"
)

// A partial file reads back as written (nil per-edge slices stay nil,
// empty ones empty), and any damage is an error.
func TestPartialFile(t *testing.T) {
	for _, p := range []*api.Partial{
		{VI: []uint64{1, 2}, VJ: []uint64{}, VK: []uint64{3}},
		{VI: []uint64{1}, VJ: []uint64{2}, VK: []uint64{3}, EIJ: []uint64{}, EIK: []uint64{1 << 63}, EJK: []uint64{4, 5}},
	} {
		b := encodePartialFile(p)
		got, err := decodePartialFile(b)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Fatalf("got %+v, %v; want %+v", got, err, p)
		}
		for i := range b {
			bad := append([]byte(nil), b...)
			bad[i] ^= 0x10
			if _, err := decodePartialFile(bad); err == nil {
				t.Fatalf("byte %d flipped: no error", i)
			}
		}
		for n := range len(b) {
			if _, err := decodePartialFile(b[:n]); err == nil {
				t.Fatalf("cut to %d bytes: no error", n)
			}
		}
	}
}
