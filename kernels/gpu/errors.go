package gpu

import (
	"errors"

	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// Sentinel errors; test with errors.Is. Those of loading the library and
// of its calls are abi's.
var (
	// ErrOutOfMemory: the subtask's blocks plus scratch do not fit the
	// device or the configured memory limit. The caller can retry with a
	// larger P (smaller blocks) or count on the CPU.
	ErrOutOfMemory = abi.ErrOutOfMemory
	// ErrNoLibrary: no libtrigrid_cuda.so was found where Open looks.
	ErrNoLibrary = abi.ErrNoLibrary
	// ErrBadLibrary: a file was found but is not a loadable library with
	// trigrid's symbols; the error carries the dynamic loader's reason.
	ErrBadLibrary = abi.ErrBadLibrary
	// ErrABIMismatch: the library was built from another trigrid.h.
	ErrABIMismatch = abi.ErrABIMismatch
	// ErrNoDevice: the library loaded but no usable GPU is visible.
	ErrNoDevice = abi.ErrNoDevice
	// ErrNotBuilt: the requested kernel was not compiled into the library.
	ErrNotBuilt = abi.ErrNotBuilt
	// ErrUnknownKernel: the kernel name is not one of Kernels().
	ErrUnknownKernel = errors.New("gpu: unknown kernel")
	// ErrNoLocalMode: per-vertex counts asked of a kernel that has no
	// per-vertex mode (LocalKernels lists those that do).
	ErrNoLocalMode = errors.New("gpu: kernel has no per-vertex mode")
)
