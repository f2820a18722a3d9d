//go:build !amd64 && !arm64

package kernels

// prefetch is a no-op where no assembly version exists.
func prefetch(addr uintptr) {}
