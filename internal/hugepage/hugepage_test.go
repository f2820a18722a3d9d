package hugepage

import (
	"testing"
)

// Advice changes nothing an array holds, whatever its size and alignment.
func TestAdviseKeepsContents(t *testing.T) {
	for _, n := range []int{0, 1, MinBytes/8 - 1, MinBytes / 8, 3*MinBytes/8 + 5} {
		s := make([]uint64, n)
		for i := range s {
			s[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		Advise(s)
		Advise(s[min(1, n):]) // an unaligned start
		for i := range s {
			if s[i] != uint64(i)*0x9e3779b97f4a7c15 {
				t.Fatalf("n=%d: s[%d] changed", n, i)
			}
		}
		fresh := make([]uint32, n)
		Advise(fresh)
		for i := range fresh {
			if fresh[i] != 0 {
				t.Fatalf("n=%d: a fresh array's s[%d] = %d after the advice", n, i, fresh[i])
			}
		}
	}
}
