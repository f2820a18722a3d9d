package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Exchange swaps the files or directories at a and b in one step
// (renameat2 with RENAME_EXCHANGE): a reader sees one or the other at
// each path, never neither. It returns an error wrapping
// errors.ErrUnsupported where the kernel or filesystem cannot.
func Exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) {
		return errors.Join(errors.ErrUnsupported, err)
	}
	return err
}
