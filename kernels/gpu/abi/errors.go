package abi

import (
	"errors"
	"fmt"
)

// Sentinel errors; test with errors.Is. Their messages keep the "gpu:"
// prefix of the package that reports them to users (kernels/gpu).
var (
	// ErrOutOfMemory: the subtask's blocks plus scratch do not fit the
	// device or the configured memory limit. The caller can retry with a
	// larger P (smaller blocks) or count on the CPU.
	ErrOutOfMemory = errors.New("gpu: out of device memory")
	// ErrNoLibrary: no libtrigrid_cuda.so was found where Open looks.
	ErrNoLibrary = errors.New("gpu: CUDA library not found")
	// ErrBadLibrary: a file was found but is not a loadable library with
	// trigrid's symbols (not an ELF shared object, another architecture,
	// missing symbols). The error carries the dynamic loader's reason.
	ErrBadLibrary = errors.New("gpu: CUDA library cannot be loaded")
	// ErrABIMismatch: the library was built from another trigrid.h.
	ErrABIMismatch = errors.New("gpu: CUDA library ABI version mismatch")
	// ErrNoDevice: the library loaded but no usable GPU is visible.
	ErrNoDevice = errors.New("gpu: no usable GPU")
	// ErrNotBuilt: the requested kernel was not compiled into the library.
	ErrNotBuilt = errors.New("gpu: kernel not built into the library")
)

// Status codes of trigrid.h.
const (
	tgOK          = 0
	tgErrInvalid  = 1
	tgErrCUDA     = 2
	tgErrOOM      = 3
	tgErrNoDevice = 4
	tgErrNotBuilt = 5
	tgErrInternal = 6
)

// Error is a failed library call: the entry point, the TG_* status and the
// library's message. errors.Is maps the status to the sentinels above.
type Error struct {
	Op   string
	Code int32
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("gpu: %s: %s (status %d)", e.Op, e.Msg, e.Code) }

// Is lets errors.Is(err, ErrOutOfMemory) and friends see through *Error.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrOutOfMemory:
		return e.Code == tgErrOOM
	case ErrNoDevice:
		return e.Code == tgErrNoDevice
	case ErrNotBuilt:
		return e.Code == tgErrNotBuilt
	}
	return false
}

// status turns a TG_* code and the error buffer into an error (nil for OK).
func status(op string, code int32, buf []byte) error {
	if code == tgOK {
		return nil
	}
	return &Error{Op: op, Code: code, Msg: cString(buf)}
}

func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
