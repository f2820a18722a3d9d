//go:build amd64 || arm64

package kernels

// prefetch asks the CPU to start loading the cache line at addr. It never
// faults, so addr may point anywhere, including past the end of a slice.
// Go has no prefetch intrinsic; an assembly call costs a few nanoseconds,
// far less than the cache miss it hides.
//
//go:noescape
func prefetch(addr uintptr)
