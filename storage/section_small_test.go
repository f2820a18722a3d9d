package storage

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestSmallSectionEncoderSameBytes: sections of at most SmallSectionBytes
// go through the small-window encoder, which must write exactly what the
// large-window encoder writes for them (shards stay byte-identical
// whichever encoder a size picks), and the section must decode back.
func TestSmallSectionEncoderSameBytes(t *testing.T) {
	big, _, err := codecs()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	// Column gaps as uvarints (the sections' usual content), runs, noise.
	gaps := func(n int) []byte {
		var b []byte
		for len(b) < n {
			b = binary.AppendUvarint(b, uint64(r.ExpFloat64()*40))
		}
		return b[:n]
	}
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	inputs := [][]byte{{7}, bytes.Repeat([]byte{1, 2, 3}, 400), gaps(1000), gaps(1025), gaps(4096), noise(5000),
		gaps(100 << 10), bytes.Repeat(gaps(3000), 50)[:SmallSectionBytes], gaps(SmallSectionBytes), noise(SmallSectionBytes)}
	for _, in := range inputs {
		want := big.EncodeAll(in, nil)
		got := zstdSmall.EncodeAll(in, nil)
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes: the small-window encoder wrote %d bytes, the large-window one %d", len(in), len(got), len(want))
		}
		out, d, err := appendSection(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if d.codec == codecZstd && !bytes.Equal(out, want) {
			t.Errorf("%d bytes: appendSection wrote other bytes than the encoder", len(in))
		}
	}
}
