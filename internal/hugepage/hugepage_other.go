//go:build !linux

package hugepage

// Advise does nothing on this system.
func Advise[T any](s []T) {}
