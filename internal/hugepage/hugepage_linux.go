package hugepage

import (
	"syscall"
	"unsafe"
)

const hugeBytes = 2 << 20

// Advise asks that the 2 MiB-aligned interior of s's backing array be
// backed by transparent huge pages (madvise MADV_HUGEPAGE), where the
// system allows it. It takes effect for pages not yet touched; call it
// before the array is first written. Arrays below MinBytes, and a refusal
// (a kernel without transparent huge pages), are left as they are: the
// advice changes speed, never contents.
func Advise[T any](s []T) {
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < MinBytes {
		return
	}
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(all)))
	start := (lo+hugeBytes-1)&^(hugeBytes-1) - lo
	end := (lo+n)&^(hugeBytes-1) - lo
	if end <= start {
		return
	}
	_ = syscall.Madvise(all[start:end], syscall.MADV_HUGEPAGE)
}
