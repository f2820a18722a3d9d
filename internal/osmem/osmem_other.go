//go:build !linux || race

package osmem

// Alloc returns n zero values of T from make; free does nothing. Under the
// race detector every array comes from make, so that the detector sees its
// accesses (it does not watch memory outside the Go heap).
func Alloc[T any](n int) (s []T, free func()) { return make([]T, max(n, 0)), func() {} }
