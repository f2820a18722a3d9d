package gpu

import (
	"runtime"
	"unsafe"

	"github.com/trigrid/trigrid/internal/hugepage"
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
