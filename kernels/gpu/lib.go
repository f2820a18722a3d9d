// Package gpu loads libtrigrid_cuda.so at run time (purego, no cgo: the
// binary builds with CGO_ENABLED=0) and counts subtasks on NVIDIA GPUs
// through the C ABI in kernels/cuda/trigrid.h. When the library or a GPU is
// missing, Select falls back to the CPU kernels with a logged reason.
package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ABIVersion is TG_ABI_VERSION of the trigrid.h this package was written
// against; Open refuses a library that reports another.
const ABIVersion = 13

// Options configure Open and the counters made from the Library.
type Options struct {
	// Path of the library; empty searches $TRIGRID_CUDA_LIB, the
	// executable's directory and the system paths.
	Path string
	// Device is the GPU index NewCounter runs on (NewCounterOn names its
	// own); 0 is the first GPU.
	Device int
	// MemLimit caps the device bytes one counter's context may hold (blocks,
	// scratch, preprocessing). 0 lets the library use the free memory at
	// context creation less a 5% reserve. Exceeding it is ErrOutOfMemory.
	MemLimit uint64
	// PinnedHost bounds the host memory the Library's counters keep
	// page-locked: blocks' arrays registered in place (tg_host_register) at
	// their first upload, shared by the counters of every device. A pinned
	// block is uploaded on a copy stream at the bus's full rate while
	// kernels run, and may be uploaded ahead of its subtask; the least
	// recently used pins are given up for room. 0 means DefaultPinnedHost;
	// negative pins nothing: blocks are copied from pageable memory before
	// each count, with the GPU idle meanwhile.
	PinnedHost int64
	// Settings override the kernels' tuning (SettingNames); nil keeps the
	// library's defaults. A value the library rejects fails NewCounter with
	// its message naming the setting.
	Settings Settings
	// Logger receives load and fallback messages; nil discards them.
	Logger *slog.Logger
}

// Device describes one GPU as the library sees it.
type Device struct {
	Index            int
	Name             string
	TotalMem         uint64
	FreeMem          uint64
	SMs              int
	CCMajor, CCMinor int
}

// Library is a loaded libtrigrid_cuda.so (or a library with the same ABI,
// such as the CPU reference libtrigrid_ref.so used in tests). It is safe
// for concurrent use; each Counter owns a device context.
type Library struct {
	path   string
	opts   Options
	logger *slog.Logger
	pins   *pinRegistry

	abiVersion      func() int32
	settingsDefault func(s *int32)
	setSettings     func(ctx uintptr, s *int32, err *byte, errlen uint64) int32
	deviceCount     func(n *int32, err *byte, errlen uint64) int32
	deviceInfo      func(dev int32, name *byte, namelen uint64, total, free *uint64, sms, ccMajor, ccMinor *int32, err *byte, errlen uint64) int32
	ctxCreate       func(dev int32, limit uint64, out *uintptr, err *byte, errlen uint64) int32
	ctxDestroy      func(ctx uintptr)
	loadBlock       func(ctx uintptr, slot int32, rowptr *uint64, nrows int64, cols *uint32, nnz, ncols int64, err *byte, errlen uint64) int32
	loadBlockAsync  func(ctx uintptr, slot int32, rowptr *uint64, nrows int64, cols *uint32, nnz, ncols int64, err *byte, errlen uint64) int32
	loadWait        func(ctx uintptr, slot int32, err *byte, errlen uint64) int32
	hostRegister    func(p unsafe.Pointer, bytes uint64, err *byte, errlen uint64) int32
	hostUnregister  func(p unsafe.Pointer, err *byte, errlen uint64) int32
	freeBlock       func(ctx uintptr, slot int32, err *byte, errlen uint64) int32
	count           func(ctx uintptr, kernel, ij, ik, jk int32, tri *uint64, ms *float64, err *byte, errlen uint64) int32
	memUsage        func(ctx uintptr, used, limit, peak *uint64) int32
	preprocess      func(ctx uintptr, slot int32, edges *uint32, npairs, n uint64, rowptr *uint64, cols *uint32, rank *uint32, stats *uint64, ms *float64, err *byte, errlen uint64) int32
	prepIDs         func(ctx uintptr, slot int32, edges *uint32, npairs uint64, width int32, stats *uint64, ms *float64, err *byte, errlen uint64) int32
	prepIDsOut      func(ctx uintptr, slot int32, edges *uint32, npairs uint64, width int32, maxVertices uint64, rowptr *uint64, cols *uint32, orig *uint64, stats *uint64, ms *float64, err *byte, errlen uint64) int32
	countLocal      func(ctx uintptr, kernel, ij, ik, jk int32, out *localOut, tri *uint64, ms *float64, err *byte, errlen uint64) int32
	countRows       func(ctx uintptr, kernel, jk int32, subs *rowsSubtask, nsubs int32, tri *uint64, ms *float64, parts *int64, err *byte, errlen uint64) int32
	inputAlloc      func(ctx uintptr, bytes uint64, err *byte, errlen uint64) int32
	inputCopyAsync  func(ctx uintptr, offset uint64, src unsafe.Pointer, bytes uint64, err *byte, errlen uint64) int32
	inputFree       func(ctx uintptr, err *byte, errlen uint64) int32
	prepIDsInput    func(ctx uintptr, slot int32, npairs uint64, width int32, maxVertices uint64, rowptr *uint64, cols *uint32, orig *uint64, stats *uint64, ms *float64, err *byte, errlen uint64) int32
	splitBlocks     func(ctx uintptr, src, p int32, slots *int32, nranges int32, bounds *uint64, groups *int32, nnz *int64, err *byte, errlen uint64) int32
	blockOut        func(ctx uintptr, slot int32, rowptr *uint64, cols *uint32, err *byte, errlen uint64) int32
	piecesBegin     func(ctx uintptr, n, maxItems uint64, idMap *uint64, idWords uint64, capacity *uint64, err *byte, errlen uint64) int32
	piecesSort      func(ctx uintptr, op, flags int32, base unsafe.Pointer, spans *uint64, nspans int32, out unsafe.Pointer, nout, nloops *uint64, err *byte, errlen uint64) int32
	piecesCSR       func(ctx uintptr, base unsafe.Pointer, spans *uint64, nspans int32, row0, nrows uint64, cols *uint32, counts *uint32, nout *uint64, err *byte, errlen uint64) int32
	piecesVertices  func(ctx uintptr, words *uint32, toDevice int32, err *byte, errlen uint64) int32
	piecesRank      func(ctx uintptr, rank *uint32, wedges, maxDegree *uint64, err *byte, errlen uint64) int32
	piecesEnd       func(ctx uintptr, err *byte, errlen uint64) int32
	rangesBegin     func(ctx uintptr, cols *uint32, nnz, n, bytes uint64, bmRatio uint32, err *byte, errlen uint64) int32
	rangesCount     func(ctx uintptr, rows *uint32, base, first, nrows uint64, entries *rangeRow, nentries uint64, triangles *uint64, kernelMS *float64, err *byte, errlen uint64) int32
	rangesEnd       func(ctx uintptr, err *byte, errlen uint64) int32
}

// DefaultPinnedHost is Options.PinnedHost's zero value: the blocks of a
// graph of some 500M edges.
const DefaultPinnedHost = 2 << 30

// errBufLen is the size of the message buffer handed to every call.
const errBufLen = 512

// Open finds, loads and checks the library. The first candidate path that
// exists is the one used: a file there that does not load is ErrBadLibrary
// (with the loader's reason), not a reason to look further. Errors wrap
// ErrNoLibrary, ErrBadLibrary or ErrABIMismatch.
func Open(opts Options) (*Library, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var tried []string
	for _, name := range candidates(opts.Path) {
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
		lib := &Library{path: name, opts: opts, logger: logger.With("component", "gpu")}
		pin := opts.PinnedHost
		if pin == 0 {
			pin = DefaultPinnedHost
		}
		lib.pins = newPinRegistry(lib, pin)
		if err := lib.bind(h); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadLibrary, name, err)
		}
		if v := lib.abiVersion(); v != ABIVersion {
			return nil, fmt.Errorf("gpu: open %s: %w: library has %d, trigrid wants %d", name, ErrABIMismatch, v, ABIVersion)
		}
		lib.logger.Debug("loaded CUDA library", "path", name)
		return lib, nil
	}
	return nil, fmt.Errorf("%w (tried %s)", ErrNoLibrary, strings.Join(tried, "; "))
}

// bind resolves every symbol first, so that a library missing one is an
// error rather than a panic inside purego.
func (l *Library) bind(h uintptr) error {
	syms := []struct {
		name string
		fn   any
	}{
		{"tg_abi_version", &l.abiVersion},
		{"tg_settings_default", &l.settingsDefault},
		{"tg_ctx_set_settings", &l.setSettings},
		{"tg_device_count", &l.deviceCount},
		{"tg_device_info", &l.deviceInfo},
		{"tg_ctx_create", &l.ctxCreate},
		{"tg_ctx_destroy", &l.ctxDestroy},
		{"tg_load_block", &l.loadBlock},
		{"tg_load_block_async", &l.loadBlockAsync},
		{"tg_load_wait", &l.loadWait},
		{"tg_host_register", &l.hostRegister},
		{"tg_host_unregister", &l.hostUnregister},
		{"tg_free_block", &l.freeBlock},
		{"tg_count", &l.count},
		{"tg_mem_usage", &l.memUsage},
		{"tg_preprocess", &l.preprocess},
		{"tg_prep_ids", &l.prepIDs},
		{"tg_prep_ids_out", &l.prepIDsOut},
		{"tg_count_local", &l.countLocal},
		{"tg_count_rows", &l.countRows},
		{"tg_input_alloc", &l.inputAlloc},
		{"tg_input_copy_async", &l.inputCopyAsync},
		{"tg_input_free", &l.inputFree},
		{"tg_prep_ids_input", &l.prepIDsInput},
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
func (l *Library) Path() string { return l.path }

// Devices lists the visible GPUs (none is not an error).
func (l *Library) Devices() ([]Device, error) {
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

// checkDevice returns ErrNoDevice unless device is visible.
func (l *Library) checkDevice(device int) error {
	devs, err := l.Devices()
	if err != nil {
		return err
	}
	if device < 0 || device >= len(devs) {
		return fmt.Errorf("gpu: device %d of %d: %w", device, len(devs), ErrNoDevice)
	}
	return nil
}

// newContext creates a context on device with the configured limit.
func (l *Library) newContext(device int) (uintptr, error) {
	buf := make([]byte, errBufLen)
	var ctx uintptr
	rc := l.ctxCreate(int32(device), l.opts.MemLimit, &ctx, &buf[0], errBufLen)
	if err := status("tg_ctx_create", rc, buf); err != nil {
		return 0, err
	}
	if ctx == 0 {
		return 0, errors.New("gpu: tg_ctx_create returned no context")
	}
	if err := l.applySettings(ctx); err != nil {
		l.ctxDestroy(ctx)
		return 0, err
	}
	return ctx, nil
}

// ptr returns the address of a slice's first element, or nil when empty,
// for passing host arrays to the library during one call.
func ptr[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
