package gpu

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/trigrid/trigrid/kernels/gpu/abi"
	"github.com/trigrid/trigrid/kernels/gpu/devmem"
)

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
type Device = abi.Device

// LibraryName is the file name the build produces (make -C kernels/cuda).
const LibraryName = abi.LibraryName

// EnvLibrary names the environment variable that points at the library.
const EnvLibrary = abi.EnvLibrary

// Library is a loaded libtrigrid_cuda.so (or a library with the same ABI,
// such as the CPU reference libtrigrid_ref.so used in tests) and the host
// memory its counters share pinned. It is safe for concurrent use; each
// Counter owns a device context.
type Library struct {
	abi    *abi.Lib
	opts   Options
	logger *slog.Logger
	pins   *devmem.Pins
	// split holds, weakly, the host copies of the blocks a device split
	// made (SplitOnDevice): their device holds them, so Stage leaves them
	// unpinned.
	split sync.Map // weak.Pointer[graph.CSR] -> struct{}
}

// DefaultPinnedHost is Options.PinnedHost's zero value: the blocks of a
// graph of some 500M edges.
const DefaultPinnedHost = devmem.DefaultPinLimit

// Open finds, loads and checks the library (abi.Open). Errors wrap
// ErrNoLibrary, ErrBadLibrary or ErrABIMismatch.
func Open(opts Options) (*Library, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lib, err := abi.Open(opts.Path)
	if err != nil {
		return nil, err
	}
	l := &Library{abi: lib, opts: opts, logger: logger.With("component", "gpu")}
	pins := devmem.DefaultPinsConfig()
	if opts.PinnedHost != 0 {
		pins.Limit = opts.PinnedHost
	}
	pins.Logger = l.logger
	l.pins = devmem.NewPins(lib, pins)
	l.logger.Debug("loaded CUDA library", "path", lib.Path())
	return l, nil
}

// Path is where the library was loaded from.
func (l *Library) Path() string { return l.abi.Path() }

// Devices lists the visible GPUs (none is not an error).
func (l *Library) Devices() ([]Device, error) { return l.abi.Devices() }

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

// newContext creates a context on device with the configured limit and
// settings.
func (l *Library) newContext(device int) (*abi.Ctx, error) {
	ctx, err := l.abi.NewCtx(device, l.opts.MemLimit)
	if err != nil {
		return nil, err
	}
	if err := l.applySettings(ctx); err != nil {
		ctx.Destroy()
		return nil, err
	}
	return ctx, nil
}

// releaseLogged releases r (nil is a no-op), logging a failure: the
// memory then stays pinned, which costs the host but no result.
func (l *Library) releaseLogged(r *abi.Registration) {
	if err := r.Release(); err != nil {
		l.logger.Warn("releasing pinned host memory", "err", err)
	}
}
