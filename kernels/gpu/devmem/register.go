package devmem

import (
	"unsafe"

	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// MinRegisterBytes is the smallest slice Register pins. Smaller slices may
// share a page with other Go objects (a page can be registered only once),
// and copying them through the driver's staging costs little anyway.
const MinRegisterBytes = 256 << 10

// Register page-locks s's backing array (abi.Register). It returns nil,
// with no error, for a slice below MinRegisterBytes. The caller calls
// Release once no copy from or into s is pending.
func Register[T any](l *abi.Lib, s []T) (*abi.Registration, error) {
	var zero T
	if uint64(len(s))*uint64(unsafe.Sizeof(zero)) < MinRegisterBytes {
		return nil, nil
	}
	return abi.Register(l, s)
}
