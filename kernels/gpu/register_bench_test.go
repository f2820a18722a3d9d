package gpu

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkRegister times page-locking host memory in place and releasing
// it (tg_host_register, tg_host_unregister) through the library named by
// $TRIGRID_CUDA_LIB, for slices of a block's size, from one goroutine and
// from several at once (whether the host serializes them decides whether
// blocks are pinned by the loaders or on the way to the kernel). The
// memory is touched before it is timed, as a decoded block is.
func BenchmarkRegister(b *testing.B) {
	lib := benchDeviceLib(b)
	for _, mib := range []int{32, 256} {
		for _, par := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("%dMiB/x%d", mib, par), func(b *testing.B) {
				bufs := make([][]uint32, par)
				for i := range bufs {
					bufs[i] = make([]uint32, mib<<20/4)
					for k := range bufs[i] {
						bufs[i][k] = uint32(k)
					}
				}
				b.SetBytes(int64(par) * int64(mib) << 20)
				for b.Loop() {
					var wg sync.WaitGroup
					errs := make([]error, par)
					for i := range bufs {
						wg.Go(func() {
							r, err := registerSlice(lib, bufs[i])
							if err == nil {
								err = r.Release()
							}
							errs[i] = err
						})
					}
					wg.Wait()
					for _, err := range errs {
						if err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// benchDeviceLib is deviceLib for benchmarks.
func benchDeviceLib(b *testing.B) *Library {
	b.Helper()
	path := envOr(EnvLibrary, "")
	if path == "" {
		b.Skip("TRIGRID_CUDA_LIB is not set: no device")
	}
	lib, err := Open(Options{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	return lib
}
