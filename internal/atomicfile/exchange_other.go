//go:build !linux

package atomicfile

import "errors"

// Exchange cannot swap two paths in one step here; callers rename twice.
func Exchange(a, b string) error { return errors.ErrUnsupported }
