package osmem

import "testing"

type pair struct {
	A    uint64
	B, C uint32
}

// Arrays of every size come back zero, hold what is written, and free
// can be called twice.
func TestAllocZeroWritableFreed(t *testing.T) {
	for _, n := range []int{0, 1, MinBytes/16 - 1, MinBytes / 16, 3*MinBytes/16 + 7, 5 << 20} {
		s, free := Alloc[pair](n)
		if len(s) != n {
			t.Fatalf("n=%d: got %d elements", n, len(s))
		}
		for i := range s {
			if s[i] != (pair{}) {
				t.Fatalf("n=%d: element %d is %+v, not zero", n, i, s[i])
			}
			s[i] = pair{uint64(i) * 0x9e3779b97f4a7c15, uint32(i), ^uint32(i)}
		}
		for i := range s {
			if want := (pair{uint64(i) * 0x9e3779b97f4a7c15, uint32(i), ^uint32(i)}); s[i] != want {
				t.Fatalf("n=%d: element %d reads %+v, wrote %+v", n, i, s[i], want)
			}
		}
		free()
		free()
	}
}

// A negative length is an empty array.
func TestAllocNegative(t *testing.T) {
	s, free := Alloc[uint32](-5)
	defer free()
	if len(s) != 0 {
		t.Fatalf("got %d elements", len(s))
	}
}
