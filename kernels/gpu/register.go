package gpu

import (
	"fmt"
	"runtime"
	"unsafe"
)

// MinRegisterBytes is the smallest slice Register pins. Smaller slices may
// share a page with other Go objects (a page can be registered only once),
// and copying them through the driver's staging costs little anyway.
const MinRegisterBytes = 256 << 10

// Registration is host memory page-locked in place (tg_host_register):
// copies between it and the device run at the bus's speed without
// staging. The slice it pins stays reachable through the Registration
// until Release, so the Go heap cannot reuse the memory while the device
// may read it.
type Registration struct {
	lib   *Library
	mem   unsafe.Pointer
	bytes uint64
	keep  any // the slice, alive while registered
}

// Register page-locks s's backing array. It returns nil, with no error,
// for a slice below MinRegisterBytes. The caller calls Release once no
// copy from or into s is pending.
func Register[T any](l *Library, s []T) (*Registration, error) {
	var zero T
	if uint64(len(s))*uint64(unsafe.Sizeof(zero)) < MinRegisterBytes {
		return nil, nil
	}
	return registerSlice(l, s)
}

// registerSlice page-locks s's backing array whatever its size (the pin
// registry decides what to pin; s is not empty).
func registerSlice[T any](l *Library, s []T) (*Registration, error) {
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

// holds reports whether n bytes at p lie inside the registered memory.
func (r *Registration) holds(p unsafe.Pointer, n uint64) bool {
	if r == nil || r.mem == nil {
		return false
	}
	lo, at := uintptr(r.mem), uintptr(p)
	return at >= lo && uint64(at-lo)+n <= r.bytes
}

// Release unpins the memory; nil and a call after a successful one are
// no-ops. No copy from or into it may be pending: the library refuses,
// and the registration stays for a later Release.
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
