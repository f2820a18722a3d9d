package abi

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/trigrid/trigrid/internal/testreflib"
)

// The library refuses a second registration of the same memory, an
// unregister while a load still reads the range, and a release of memory
// it never registered; a refused release leaves the registration for a
// later one.
func TestRegister(t *testing.T) {
	lib := openRef(t)
	// 2^15 rows of two columns each.
	cols := make([]uint32, 1<<16)
	off := make([]uint64, len(cols)/2+1)
	for i := range cols {
		cols[i] = uint32(i % 2)
	}
	for r := range off {
		off[r] = uint64(2 * r)
	}
	r, err := Register(lib, cols)
	if err != nil || r == nil {
		t.Fatalf("register: %v, %v", r, err)
	}
	if !r.Holds(unsafe.Pointer(&cols[10]), 8) || r.Holds(unsafe.Pointer(&cols[len(cols)-1]), 8) || r.Bytes() != uint64(len(cols))*4 {
		t.Errorf("the registration of %d bytes holds the wrong range", r.Bytes())
	}
	if _, err := Register(lib, cols); err == nil {
		t.Error("registered memory was registered again")
	}
	ctx, err := lib.NewCtx(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Destroy()
	if err := ctx.LoadBlock(0, off, cols, 2, true); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := r.Release(); !errors.As(err, &e) {
		t.Fatalf("release with a load pending: %v; want the library's refusal", err)
	}
	if err := ctx.LoadWait(0); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(); err != nil {
		t.Fatalf("release after the load completed: %v", err)
	}
	if err := r.Release(); err != nil {
		t.Errorf("second release: %v; want a no-op", err)
	}
	if err := (&Registration{lib: lib, mem: unsafe.Pointer(&off[0]), keep: off}).Release(); err == nil {
		t.Error("memory never registered was released without an error")
	}
}

// openRef opens the reference library.
func openRef(t *testing.T) *Lib {
	t.Helper()
	good, _ := testreflib.Paths(t)
	lib, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}
