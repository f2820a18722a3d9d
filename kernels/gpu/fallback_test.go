package gpu

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A GPU kernel that falls back to the CPU records the kernel that runs and
// why, and logs the reason at the default (info) level.
func TestSelectFallbackReason(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libtrigrid_cuda.so")
	if err := os.WriteFile(path, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, kernel, want, reason string
	}{
		{path, "wetric", "auto", "cannot be loaded"},
		{path, "auto", "auto", "cannot be loaded"},
		{filepath.Join(t.TempDir(), "missing.so"), "trix", "auto", "not found"},
	} {
		var logs bytes.Buffer
		sel, err := Select("auto", tc.kernel, SelectOptions{Library: Options{Path: tc.path},
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
		if err != nil {
			t.Fatal(err)
		}
		if sel.Device != "cpu" || sel.Kernel != tc.want {
			t.Errorf("%s %s: device %s kernel %s, want cpu %s", tc.path, tc.kernel, sel.Device, sel.Kernel, tc.want)
		}
		if !strings.Contains(sel.Fallback, tc.reason) || !strings.Contains(sel.Fallback, tc.path) {
			t.Errorf("%s %s: fallback %q, want %q and the path", tc.path, tc.kernel, sel.Fallback, tc.reason)
		}
		if !strings.Contains(logs.String(), tc.reason) {
			t.Errorf("%s %s: reason not logged at info: %q", tc.path, tc.kernel, logs.String())
		}
	}
	// The CPU asked for is no fallback.
	sel, err := Select("auto", "hash", SelectOptions{Library: Options{Path: path}})
	if err != nil || sel.Fallback != "" || sel.Kernel != "hash" {
		t.Fatalf("Select(auto, hash) = %+v, %v; want hash with no fallback", sel, err)
	}
}
