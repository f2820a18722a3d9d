package graph

import "unsafe"

// reuse returns n elements of D over the memory of s, which the caller
// no longer needs, or nil when they do not fit in it or it is not
// aligned for D. The elements hold whatever s held.
func reuse[D, S entry](s []S, n int) []D {
	var d D
	var e S
	size, have := uint64(unsafe.Sizeof(d)), uint64(unsafe.Sizeof(e))*uint64(len(s))
	if n == 0 || uint64(n)*size > have || uintptr(unsafe.Pointer(unsafe.SliceData(s)))%unsafe.Alignof(d) != 0 {
		return nil
	}
	return unsafe.Slice((*D)(unsafe.Pointer(unsafe.SliceData(s))), n)
}

// reuseOrMake is reuse, or a new slice where reuse cannot.
func reuseOrMake[D, S entry](s []S, n int) []D {
	if d := reuse[D](s, n); d != nil {
		return d
	}
	return make([]D, n)
}
