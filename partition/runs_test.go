package partition

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRunCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []runCodec{codecFixed, codecDelta} {
		for _, bits := range []uint{0, 7, 8, 22, 40, 63, 64} {
			for _, n := range []int{1, 2, 9, 1000} {
				data := make([]uint64, n)
				for k := range data {
					data[k] = r.Uint64()
					if bits < 64 {
						data[k] &= 1<<bits - 1
					}
				}
				if c == codecDelta {
					slices.Sort(data)
				}
				raw := c.encode(nil, data)
				got, err := c.decode([]uint64{42}, raw, n)
				if err != nil {
					t.Fatalf("codec %d, %d bits, n=%d: %v", c, bits, n, err)
				}
				if got[0] != 42 || !slices.Equal(got[1:], data) {
					t.Fatalf("codec %d, %d bits, n=%d: round trip differs", c, bits, n)
				}
				// A frame cut short or with bytes to spare is an error.
				for _, bad := range [][]byte{raw[:len(raw)-1], append(slices.Clone(raw), 0)} {
					if _, err := c.decode(nil, bad, n); err == nil || !strings.Contains(err.Error(), "frame") {
						t.Fatalf("codec %d, %d bits, n=%d: corrupt frame decoded (err %v)", c, bits, n, err)
					}
				}
			}
		}
	}
}
