package gpu

import (
	"runtime"
	"unsafe"

	"github.com/trigrid/trigrid/internal/hugepage"
	"github.com/trigrid/trigrid/internal/osmem"
	"github.com/trigrid/trigrid/internal/parallel"
)

// pageBytes is the page size the host memory is touched by.
const pageBytes = 4096

// prefault writes the zero value into one element of every page of s on
// all cores, asking first for huge pages (hugepage.Advise). A fresh large slice is not yet backed by memory; a copy from
// the device into it would take each page's fault on the driver's one
// thread, which can cost more than the copy itself.
func prefault[T any](s []T) {
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

// hostArena hands out one count's host arrays: from spare, pinned memory
// an earlier step left touched and pinned (its arrays hold what that
// memory held, not zeros), while it has room, else from fresh pages
// (osmem, zero). free unmaps the fresh pages; the spare is its owner's to
// release.
type hostArena struct {
	rest  unsafe.Pointer // the spare's room left, 8-byte aligned
	room  uint64
	frees []func()
}

// newHostArena is an arena over spare's memory (nil: fresh pages only).
func newHostArena(spare *Registration) *hostArena {
	a := &hostArena{}
	if spare != nil && uintptr(spare.mem)%8 == 0 {
		a.rest, a.room = spare.mem, spare.bytes
	}
	return a
}

// fits reports whether bytes more fit the spare's room.
func (a *hostArena) fits(bytes uint64) bool { return bytes <= a.room }

// arenaBytes is the spare's room n values of T take (8-byte aligned).
func arenaBytes[T any](n int) uint64 {
	var zero T
	return (uint64(n)*uint64(unsafe.Sizeof(zero)) + 7) &^ 7
}

// arenaAlloc returns n values of T, from the spare when they fit its
// room, else from fresh pages.
func arenaAlloc[T any](a *hostArena, n int) []T {
	if bytes := arenaBytes[T](n); n > 0 && a.fits(bytes) {
		s := unsafe.Slice((*T)(a.rest), n)
		a.rest, a.room = unsafe.Add(a.rest, bytes), a.room-bytes
		return s
	}
	s, free := osmem.Alloc[T](n)
	a.frees = append(a.frees, free)
	return s
}

// free unmaps the fresh pages handed out; no array of them may be used
// after it.
func (a *hostArena) free() {
	for _, f := range a.frees {
		f()
	}
	a.frees = nil
}
