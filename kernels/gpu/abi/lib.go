// Package abi binds the C ABI of libtrigrid_cuda.so (kernels/cuda/trigrid.h)
// without cgo: it finds the library, loads it with purego (the binary
// builds with CGO_ENABLED=0), resolves every entry point, checks the ABI
// version, and wraps each entry in a typed Go method that takes slices and
// returns a Go error (an *Error, whose status maps to this package's
// sentinel errors). It mirrors the header's constants and structs, and
// header_test.go holds them equal to it.
//
// The binding decides nothing: which blocks go where, what is pinned and
// how a count runs are kernels/gpu/devmem's and kernels/gpu's. The same
// ABI is implemented on the CPU by the reference library
// (kernels/cuda/ref), against which every wrapper is tested.
package abi

import (
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Version is TG_ABI_VERSION of the trigrid.h this package was written
// against; Open refuses a library that reports another.
const Version = 16

// Lib is a loaded library with the ABI of trigrid.h. It is safe for
// concurrent use; a context (Ctx) is not.
type Lib struct {
	path string

	abiVersion      func() int32
	settingsDefault func(s *int32)
	setSettings     func(ctx uintptr, s *int32, err *byte, errlen uint64) int32
	deviceCount     func(n *int32, err *byte, errlen uint64) int32
	deviceInfo      func(dev int32, name *byte, namelen uint64, total, free *uint64, sms, ccMajor, ccMinor *int32, err *byte, errlen uint64) int32
	ctxCreate       func(dev int32, limit uint64, out *uintptr, err *byte, errlen uint64) int32
	ctxDestroy      func(ctx uintptr)
	loadBlock       func(ctx uintptr, slot int32, rowptr *uint64, nrows int64, cols *uint32, nnz, ncols int64, async int32, err *byte, errlen uint64) int32
	loadWait        func(ctx uintptr, slot int32, err *byte, errlen uint64) int32
	hostRegister    func(p unsafe.Pointer, bytes uint64, err *byte, errlen uint64) int32
	hostUnregister  func(p unsafe.Pointer, err *byte, errlen uint64) int32
	freeBlock       func(ctx uintptr, slot int32, err *byte, errlen uint64) int32
	count           func(ctx uintptr, kernel, ij, ik, jk int32, tri *uint64, ms *float64, err *byte, errlen uint64) int32
	memUsage        func(ctx uintptr, used, limit, peak *uint64) int32
	preprocess      func(ctx uintptr, slot int32, edges *uint32, npairs, n uint64, rowptr *uint64, cols *uint32, rank *uint32, stats *uint64, ms *float64, err *byte, errlen uint64) int32
	prepIDs         func(ctx uintptr, slot, fromInput int32, edges unsafe.Pointer, npairs uint64, width int32, maxVertices uint64, rowptr *uint64, cols *uint32, orig *uint64, stats *uint64, ms *float64, err *byte, errlen uint64) int32
	countLocal      func(ctx uintptr, kernel, ij, ik, jk int32, out *localOut, tri *uint64, ms *float64, err *byte, errlen uint64) int32
	countRows       func(ctx uintptr, kernel, jk int32, subs *rowsSubtask, nsubs int32, tri *uint64, ms *float64, parts *int64, err *byte, errlen uint64) int32
	inputAlloc      func(ctx uintptr, bytes uint64, err *byte, errlen uint64) int32
	inputCopyAsync  func(ctx uintptr, offset uint64, src unsafe.Pointer, bytes uint64, err *byte, errlen uint64) int32
	inputFree       func(ctx uintptr, err *byte, errlen uint64) int32
	splitBlocks     func(ctx uintptr, src, p int32, slots *int32, nranges int32, bounds *uint64, groups *int32, nnz *int64, err *byte, errlen uint64) int32
	blockOut        func(ctx uintptr, slot int32, rowptr *uint64, cols *uint32, err *byte, errlen uint64) int32
	piecesBegin     func(ctx uintptr, n, maxItems uint64, idMap *uint64, idWords uint64, capacity *uint64, err *byte, errlen uint64) int32
	piecesSort      func(ctx uintptr, op, flags int32, base unsafe.Pointer, spans *uint64, nspans int32, out unsafe.Pointer, nout, nloops *uint64, err *byte, errlen uint64) int32
	piecesCSR       func(ctx uintptr, base unsafe.Pointer, spans *uint64, nspans int32, row0, nrows uint64, cols *uint32, counts *uint32, nout *uint64, err *byte, errlen uint64) int32
	piecesVertices  func(ctx uintptr, words *uint32, toDevice int32, err *byte, errlen uint64) int32
	piecesRank      func(ctx uintptr, rank *uint32, wedges, maxDegree *uint64, err *byte, errlen uint64) int32
	piecesEnd       func(ctx uintptr, err *byte, errlen uint64) int32
	rangesBegin     func(ctx uintptr, cols *uint32, nnz, n, bytes uint64, bmRatio uint32, err *byte, errlen uint64) int32
	rangesCount     func(ctx uintptr, rows *uint32, base, first, nrows uint64, entries *RangeRow, nentries uint64, triangles *uint64, kernelMS *float64, err *byte, errlen uint64) int32
	rangesEnd       func(ctx uintptr, err *byte, errlen uint64) int32
}

// errBufLen is the size of the message buffer handed to every call.
const errBufLen = 512

// Open finds, loads and checks the library: at explicit when it is not
// empty, else where candidates lists. The first candidate path that
// exists is the one used: a file there that does not load is
// ErrBadLibrary (with the loader's reason), not a reason to look further.
// Errors wrap ErrNoLibrary, ErrBadLibrary or ErrABIMismatch.
func Open(explicit string) (*Lib, error) {
	var tried []string
	for _, name := range candidates(explicit) {
		if isPath(name) {
			if _, err := os.Stat(name); err != nil {
				tried = append(tried, fmt.Sprintf("%s: %v", name, err))
				continue
			}
		}
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			if isPath(name) {
				// The loader's message names the file and the reason
				// ("invalid ELF header", "wrong ELF class").
				msg := err.Error()
				if !strings.Contains(msg, name) {
					msg = name + ": " + msg
				}
				return nil, fmt.Errorf("%w: %s", ErrBadLibrary, msg)
			}
			tried = append(tried, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		lib := &Lib{path: name}
		if err := lib.bind(h); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadLibrary, name, err)
		}
		if v := lib.abiVersion(); v != Version {
			return nil, fmt.Errorf("gpu: open %s: %w: library has %d, trigrid wants %d", name, ErrABIMismatch, v, Version)
		}
		return lib, nil
	}
	return nil, fmt.Errorf("%w (tried %s)", ErrNoLibrary, strings.Join(tried, "; "))
}

// symbol is an entry point of trigrid.h and the function field of Lib it
// binds.
type symbol struct {
	name string
	fn   any
}

// symbols lists every entry point of trigrid.h with l's field for it.
func (l *Lib) symbols() []symbol {
	return []symbol{
		{"tg_abi_version", &l.abiVersion},
		{"tg_settings_default", &l.settingsDefault},
		{"tg_ctx_set_settings", &l.setSettings},
		{"tg_device_count", &l.deviceCount},
		{"tg_device_info", &l.deviceInfo},
		{"tg_ctx_create", &l.ctxCreate},
		{"tg_ctx_destroy", &l.ctxDestroy},
		{"tg_load_block", &l.loadBlock},
		{"tg_load_wait", &l.loadWait},
		{"tg_host_register", &l.hostRegister},
		{"tg_host_unregister", &l.hostUnregister},
		{"tg_free_block", &l.freeBlock},
		{"tg_count", &l.count},
		{"tg_mem_usage", &l.memUsage},
		{"tg_preprocess", &l.preprocess},
		{"tg_prep_ids", &l.prepIDs},
		{"tg_count_local", &l.countLocal},
		{"tg_count_rows", &l.countRows},
		{"tg_input_alloc", &l.inputAlloc},
		{"tg_input_copy_async", &l.inputCopyAsync},
		{"tg_input_free", &l.inputFree},
		{"tg_split_blocks", &l.splitBlocks},
		{"tg_block_out", &l.blockOut},
		{"tg_pieces_begin", &l.piecesBegin},
		{"tg_pieces_sort", &l.piecesSort},
		{"tg_pieces_csr", &l.piecesCSR},
		{"tg_pieces_vertices", &l.piecesVertices},
		{"tg_pieces_rank", &l.piecesRank},
		{"tg_pieces_end", &l.piecesEnd},
		{"tg_ranges_begin", &l.rangesBegin},
		{"tg_ranges_count", &l.rangesCount},
		{"tg_ranges_end", &l.rangesEnd},
	}
}

// bind resolves every symbol first, so that a library missing one is an
// error rather than a panic inside purego.
func (l *Lib) bind(h uintptr) error {
	syms := l.symbols()
	var missing []string
	addrs := make([]uintptr, len(syms))
	for i, s := range syms {
		a, err := purego.Dlsym(h, s.name)
		if err != nil || a == 0 {
			missing = append(missing, s.name)
			continue
		}
		addrs[i] = a
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing symbols %s", strings.Join(missing, ", "))
	}
	for i, s := range syms {
		purego.RegisterFunc(s.fn, addrs[i])
	}
	return nil
}

// Path is where the library was loaded from.
func (l *Lib) Path() string { return l.path }

// Device describes one GPU as the library sees it.
type Device struct {
	Index            int
	Name             string
	TotalMem         uint64
	FreeMem          uint64
	SMs              int
	CCMajor, CCMinor int
}

// Devices lists the visible GPUs (tg_device_count, tg_device_info); none
// is not an error.
func (l *Lib) Devices() ([]Device, error) {
	buf := make([]byte, errBufLen)
	var n int32
	if err := status("tg_device_count", l.deviceCount(&n, &buf[0], errBufLen), buf); err != nil {
		return nil, err
	}
	devs := make([]Device, 0, n)
	for i := int32(0); i < n; i++ {
		name := make([]byte, 256)
		var total, free uint64
		var sms, ma, mi int32
		rc := l.deviceInfo(i, &name[0], uint64(len(name)), &total, &free, &sms, &ma, &mi, &buf[0], errBufLen)
		if err := status("tg_device_info", rc, buf); err != nil {
			return nil, err
		}
		devs = append(devs, Device{Index: int(i), Name: cString(name), TotalMem: total, FreeMem: free,
			SMs: int(sms), CCMajor: int(ma), CCMinor: int(mi)})
	}
	return devs, nil
}

// ptr returns the address of a slice's first element, or nil when empty,
// for passing host arrays to the library during one call.
func ptr[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
