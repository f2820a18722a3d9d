package abi

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Registration is host memory page-locked in place (tg_host_register):
// copies between it and the device run at the bus's speed without
// staging. The slice it pins stays reachable through the Registration
// until Release, so the Go heap cannot reuse the memory while the device
// may read it.
type Registration struct {
	lib   *Lib
	mem   unsafe.Pointer
	bytes uint64
	keep  any // the slice, alive while registered
}

// Register page-locks s's backing array (tg_host_register; s not empty).
// Registration needs no context and may be called from any thread. A
// range that overlaps one registered already, or one the host will not
// lock, is an error. The caller calls Release once no copy from or into
// s is pending.
func Register[T any](l *Lib, s []T) (*Registration, error) {
	var zero T
	bytes := uint64(len(s)) * uint64(unsafe.Sizeof(zero))
	mem := unsafe.Pointer(unsafe.SliceData(s))
	buf := make([]byte, errBufLen)
	rc := l.hostRegister(mem, bytes, &buf[0], errBufLen)
	if err := status("tg_host_register", rc, buf); err != nil {
		return nil, fmt.Errorf("gpu: register %d bytes of host memory: %w", bytes, err)
	}
	return &Registration{lib: l, mem: mem, bytes: bytes, keep: s}, nil
}

// Mem is the registered memory's start; nil for a nil Registration or
// once released.
func (r *Registration) Mem() unsafe.Pointer {
	if r == nil {
		return nil
	}
	return r.mem
}

// Bytes is the registered memory's length; 0 for a nil Registration.
func (r *Registration) Bytes() uint64 {
	if r == nil {
		return 0
	}
	return r.bytes
}

// Holds reports whether n bytes at p lie inside the registered memory.
func (r *Registration) Holds(p unsafe.Pointer, n uint64) bool {
	if r == nil || r.mem == nil {
		return false
	}
	lo, at := uintptr(r.mem), uintptr(p)
	return at >= lo && uint64(at-lo)+n <= r.bytes
}

// Release unpins the memory (tg_host_unregister); nil and a call after a
// successful one are no-ops. No copy from or into it may be pending: the
// library refuses, and the registration stays for a later Release.
func (r *Registration) Release() error {
	if r == nil || r.mem == nil {
		return nil
	}
	buf := make([]byte, errBufLen)
	rc := r.lib.hostUnregister(r.mem, &buf[0], errBufLen)
	if err := status("tg_host_unregister", rc, buf); err != nil {
		return fmt.Errorf("gpu: release registered host memory: %w", err)
	}
	runtime.KeepAlive(r.keep)
	r.mem, r.keep = nil, nil
	return nil
}
