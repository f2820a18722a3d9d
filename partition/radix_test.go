package partition

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 5, 255, 256, 1000, 100_000} {
		for _, bits := range []uint{1, 12, 22, 33, 64} {
			a := make([]uint64, n)
			for k := range a {
				a[k] = r.Uint64()
				if bits < 64 {
					a[k] &= 1<<bits - 1
				}
			}
			want := slices.Clone(a)
			slices.Sort(want)
			got := radixSort(a, make([]uint64, n))
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d bits=%d: radix sort differs from slices.Sort", n, bits)
			}
		}
	}
}
