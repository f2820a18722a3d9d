package abi

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/trigrid/trigrid/internal/testreflib"
)

func TestOpenReference(t *testing.T) {
	lib := openRef(t)
	devs, err := lib.Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].Name != "reference" {
		t.Fatalf("devices = %+v, want one named reference", devs)
	}
}

func TestOpenABIMismatch(t *testing.T) {
	_, bad := testreflib.Paths(t)
	_, err := Open(bad)
	if !errors.Is(err, ErrABIMismatch) || !strings.Contains(err.Error(), "library has 999") {
		t.Fatalf("Open(bad ABI) = %v, want ErrABIMismatch naming the library's version", err)
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "libnothere.so"))
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Open(missing) = %v, want ErrNoLibrary", err)
	}
}

// A file that exists but is not a shared library is reported as such, with
// the loader's reason, never as "not found".
func TestOpenNotALibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if !errors.Is(err, ErrBadLibrary) || errors.Is(err, ErrNoLibrary) {
		t.Fatalf("Open(text file) = %v, want ErrBadLibrary", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

// The library's own checks of the input buffer: a copy beyond it, a
// preprocessing of more bytes than were copied, or of no buffer, is
// TG_ERR_INVALID, and the preprocessing frees the buffer even then.
func TestInputBuffer(t *testing.T) {
	ctx, err := openRef(t).NewCtx(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Destroy()
	used0, _, _ := ctx.MemUsage()
	ids := []uint32{1, 2, 2, 3, 3, 1, 4, 4}
	invalid := func(what string, err error, want string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Code != tgErrInvalid || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v; want TG_ERR_INVALID saying %q", what, err, want)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var st PrepStats
	prep := func() error {
		_, err := ctx.PrepIDsInput(0, 4, 4, IDsOut{}, &st)
		return err
	}
	invalid("no buffer", prep(), "no input buffer")
	invalid("copy without a buffer", ctx.InputCopy(0, ids[:2]), "no input buffer")
	must(ctx.InputAlloc(32))
	invalid("copy beyond", ctx.InputCopy(24, ids[:4]), "exceed")
	must(ctx.InputCopy(0, ids[:4]))
	invalid("half copied", prep(), "16 copied")
	if used, _, _ := ctx.MemUsage(); used != used0 {
		t.Fatalf("%d device bytes held after a refused preprocessing, %d before", used, used0)
	}
	must(ctx.InputAlloc(32))
	must(ctx.InputCopy(16, ids[4:]))
	must(ctx.InputCopy(0, ids[:4]))
	must(prep())
	// The triangle 1-2-3 and a self-loop of an id seen nowhere else.
	if st[PrepVertices] != 3 || st[PrepEdges] != 3 || st[PrepSelfLoops] != 1 || st[PrepIsolated] != 1 {
		t.Fatalf("stats %v: want 3 vertices, 3 edges, 1 loop, 1 isolated id", st)
	}
	invalid("consumed", prep(), "no input buffer")
	must(ctx.InputAlloc(32))
	must(ctx.InputFree())
	must(ctx.InputFree())
}

// The merged entries refuse a flag that is neither 0 nor 1 (async of
// tg_load_block, from_input of tg_prep_ids), naming it.
func TestFlagsChecked(t *testing.T) {
	ctx, err := openRef(t).NewCtx(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Destroy()
	var st PrepStats
	pairs := []uint32{1, 2}
	_, err = ctx.prepIDs(0, 2, unsafe.Pointer(&pairs[0]), 1, 4, IDsOut{}, &st)
	var e *Error
	if !errors.As(err, &e) || e.Code != tgErrInvalid || !strings.Contains(err.Error(), "from_input 2") {
		t.Errorf("tg_prep_ids with from_input 2: %v; want TG_ERR_INVALID naming it", err)
	}
	off, cols := []uint64{0, 1}, []uint32{0}
	rc := ctx.lib.loadBlock(ctx.h, 0, &off[0], 1, &cols[0], 1, 1, 2, &ctx.buf[0], errBufLen)
	if err := ctx.status("tg_load_block", rc); !errors.As(err, &e) || e.Code != tgErrInvalid || !strings.Contains(err.Error(), "async 2") {
		t.Errorf("tg_load_block with async 2: %v; want TG_ERR_INVALID naming it", err)
	}
	if err := ctx.LoadBlock(0, off, cols, 1, false); err != nil {
		t.Errorf("the same block with async 0: %v", err)
	}
}
