//go:build linux && !race

package osmem

import (
	"sync"
	"syscall"
	"unsafe"

	"github.com/trigrid/trigrid/internal/hugepage"
)

// Alloc returns n zero values of T and the function that frees them. T
// must hold no pointers (the collector does not see the array). An array
// of at least MinBytes gets pages of its own, advised huge
// (hugepage.Advise), and free unmaps them: no use of the array may follow
// it. Smaller arrays, and any the system refuses to map, come from make
// and free does nothing. free may be called more than once.
func Alloc[T any](n int) (s []T, free func()) {
	var zero T
	size := uintptr(n) * unsafe.Sizeof(zero)
	if n <= 0 || size < MinBytes || size/unsafe.Sizeof(zero) != uintptr(n) {
		return make([]T, max(n, 0)), func() {}
	}
	mem, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return make([]T, n), func() {}
	}
	s = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	hugepage.Advise(s)
	var once sync.Once
	return s, func() { once.Do(func() { _ = syscall.Munmap(mem) }) }
}
