package gpu

import (
	"errors"
	"testing"
	"unsafe"
)

// Register pins a large slice and not a small one; the library refuses a
// second registration of the same memory, an unregister while a load still
// reads the range, and a release of memory it never registered.
func TestRegister(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Register(lib, make([]uint32, 16)); r != nil || err != nil {
		t.Fatalf("small slice: got %v, %v; want nothing registered", r, err)
	}
	// 2^15 rows of two columns each: 256 KiB of columns.
	cols := make([]uint32, MinRegisterBytes/4)
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
	if _, err := Register(lib, cols); err == nil {
		t.Error("registered memory was registered again")
	}
	ctx, err := lib.newContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer lib.ctxDestroy(ctx)
	buf := make([]byte, errBufLen)
	nrows := int64(len(off) - 1)
	if err := status("tg_load_block_async", lib.loadBlockAsync(ctx, 0, &off[0], nrows, &cols[0], int64(len(cols)), 2, &buf[0], errBufLen), buf); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := r.Release(); !errors.As(err, &e) {
		t.Fatalf("release with a load pending: %v; want the library's refusal", err)
	}
	// The refused release left the registration in place: complete the
	// load and release it again.
	if err := status("tg_load_wait", lib.loadWait(ctx, 0, &buf[0], errBufLen), buf); err != nil {
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
