package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func TestIDMapRoundTrip(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]uint64, 5000)
	for k := range random {
		random[k] = rng.Uint64()
	}
	identity := make([]uint64, 100000)
	for k := range identity {
		identity[k] = uint64(k)
	}
	tests := []struct {
		name string
		ids  []uint64
	}{
		{"empty", nil},
		{"one", []uint64{1<<64 - 1}},
		{"extremes", []uint64{0, 1<<64 - 1, 0, 1 << 63, 1<<63 - 1}},
		{"identity", identity},
		{"random", random},
	}
	s := NewMemStore()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := WriteIDMap(ctx, s, "ids-"+tc.name, tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadIDMap(ctx, s, ref)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.ids) || !slices.Equal(got, tc.ids) && len(got) > 0 {
				t.Fatalf("ids differ (%d vs %d)", len(got), len(tc.ids))
			}
			t.Logf("%d ids in %d bytes", len(tc.ids), ref.Bytes)
		})
	}
}

func TestIDMapCorrupt(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	ids := []uint64{5, 3, 900, 1 << 40, 7, 7, 0}
	ref, err := WriteIDMap(ctx, s, "ids", ids)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := s.Get(ctx, "ids")
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x10
		// Decode the file itself: the manifest's whole-file hash would
		// catch every flip before the file's own checks run.
		if _, err := decodeIDMap("ids", bad); err == nil {
			t.Fatalf("byte %d flipped: decoded without error", i)
		}
	}
	for n := range len(data) {
		if _, err := decodeIDMap("ids", data[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: decoded", n)
		}
	}
	s.Put(ctx, "ids", data[:len(data)-1])
	if _, err := ReadIDMap(ctx, s, ref); !errors.Is(err, ErrMismatch) {
		t.Fatalf("short file: %v", err)
	}
	if _, err := ReadIDMap(ctx, NewMemStore(), ref); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
