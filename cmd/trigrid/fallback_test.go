package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// --kernel wetric without a usable GPU says, in the report, the JSON and the
// default log, which kernel ran and why; the count is still exact.
func TestCountKernelFallbackReported(t *testing.T) {
	notLib := write(t, "passwd", "root:x:0:0:root:/root:/bin/sh\n")
	graph := filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz")
	out, stderr, err := run(t, "count", "--json", "--progress", "none", "--kernel", "wetric", "--cuda-lib", notLib, graph)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	rep := decodeReport(t, out)
	want := countJSON(t, "--kernel", "reference", graph)
	if rep.Triangles != want.Triangles {
		t.Fatalf("fallback counted %d triangles, reference %d", rep.Triangles, want.Triangles)
	}
	if rep.Device != "cpu" || rep.KernelRequested != "wetric" || !strings.HasPrefix(rep.Kernel, "auto") {
		t.Errorf("device %q kernel %q asked %q; want cpu, auto, wetric", rep.Device, rep.Kernel, rep.KernelRequested)
	}
	if !strings.Contains(rep.Fallback, notLib) || !strings.Contains(rep.Fallback, "cannot be loaded") {
		t.Errorf("fallback %q does not give the reason", rep.Fallback)
	}
	if strings.Contains(stderr, "no CUDA library found") || !strings.Contains(stderr, "cannot be loaded") {
		t.Errorf("log does not give the real reason:\n%s", stderr)
	}
	text, _, err := run(t, "count", "--progress", "none", "--kernel", "wetric", "--cuda-lib", notLib, graph)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "asked for wetric, counted on the CPU") || !strings.Contains(text, "cannot be loaded") {
		t.Errorf("report does not say which kernel ran and why:\n%s", text)
	}
	text, _, err = run(t, "count", "--progress", "none", "--cuda-lib", notLib, graph)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "fallback     counted on the CPU: ") || !strings.Contains(text, "cannot be loaded") {
		t.Errorf("report with --kernel auto does not say why the GPU was not used:\n%s", text)
	}
	// --device cpu is no fallback, and a library named with it is refused
	// rather than ignored.
	text, _, err = run(t, "count", "--progress", "none", "--device", "cpu", graph)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "fallback") {
		t.Errorf("--device cpu reports a fallback:\n%s", text)
	}
	if _, _, err := run(t, "count", "--progress", "none", "--device", "cpu", "--cuda-lib", notLib, graph); err == nil || !strings.Contains(err.Error(), "--cuda-lib") {
		t.Errorf("--device cpu with --cuda-lib: %v, want an error naming --cuda-lib", err)
	}
	// A library from the environment is a standing default, not a request:
	// --device cpu counts without it.
	t.Setenv("TRIGRID_CUDA_LIB", notLib)
	if _, stderr, err := run(t, "count", "--progress", "none", "--device", "cpu", graph); err != nil {
		t.Errorf("--device cpu with TRIGRID_CUDA_LIB set: %v\n%s", err, stderr)
	}
	// --device gpu fails with the same reason instead.
	if _, _, err := run(t, "count", "--progress", "none", "--device", "gpu", "--cuda-lib", notLib, graph); err == nil || !strings.Contains(err.Error(), "cannot be loaded") {
		t.Errorf("--device gpu with a bad library: %v", err)
	}
}
