package devmem

import (
	"runtime"
	"unsafe"

	"github.com/trigrid/trigrid/internal/hugepage"
	"github.com/trigrid/trigrid/internal/osmem"
	"github.com/trigrid/trigrid/internal/parallel"
)

// pageBytes is the page size the host memory is touched by.
const pageBytes = 4096

// Prefault writes the zero value into one element of every page of s on
// all cores, asking first for huge pages (hugepage.Advise). A fresh large
// slice is not yet backed by memory; a copy from the device into it would
// take each page's fault on the driver's one thread, which can cost more
// than the copy itself.
func Prefault[T any](s []T) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 || len(s)*size < 1<<20 {
		return
	}
	hugepage.Advise(s)
	step := max(1, pageBytes/size)
	pages := (len(s) + step - 1) / step
	parallel.Dynamic(pages, 256, runtime.GOMAXPROCS(0), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			s[p*step] = zero
		}
	})
}

// Arena hands out one count's host arrays: from spare memory an earlier
// step left touched and pinned (its arrays hold what that memory held, not
// zeros), while it has room, else from fresh pages (osmem, zero). Free
// unmaps the fresh pages; the spare is its owner's to release.
type Arena struct {
	rest  unsafe.Pointer // the spare's room left, 8-byte aligned
	room  uint64
	frees []func()
}

// NewArena is an arena over bytes of spare memory at mem (nil: fresh
// pages only), which stays its owner's.
func NewArena(mem unsafe.Pointer, bytes uint64) *Arena {
	a := &Arena{}
	if mem != nil && uintptr(mem)%8 == 0 {
		a.rest, a.room = mem, bytes
	}
	return a
}

// Fits reports whether bytes more fit the spare's room.
func (a *Arena) Fits(bytes uint64) bool { return bytes <= a.room }

// ArenaBytes is the spare's room n values of T take (8-byte aligned).
func ArenaBytes[T any](n int) uint64 {
	var zero T
	return (uint64(n)*uint64(unsafe.Sizeof(zero)) + 7) &^ 7
}

// Alloc returns n values of T, from a's spare when they fit its room,
// else from fresh pages.
func Alloc[T any](a *Arena, n int) []T {
	if bytes := ArenaBytes[T](n); n > 0 && a.Fits(bytes) {
		s := unsafe.Slice((*T)(a.rest), n)
		a.rest, a.room = unsafe.Add(a.rest, bytes), a.room-bytes
		return s
	}
	s, free := osmem.Alloc[T](n)
	a.frees = append(a.frees, free)
	return s
}

// Free unmaps the fresh pages handed out; no array of them may be used
// after it.
func (a *Arena) Free() {
	for _, f := range a.frees {
		f()
	}
	a.frees = nil
}
