package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/trigrid/trigrid/pipeline"
)

// deviceLibrary is $TRIGRID_CUDA_LIB when set (the real library, on a GPU
// machine); otherwise it compiles the plain-C reference implementation of
// the same ABI into a private directory (so parallel test packages never
// write the same file), or skips when there is no C compiler.
func deviceLibrary(t *testing.T) string {
	t.Helper()
	if lib := os.Getenv("TRIGRID_CUDA_LIB"); lib != "" {
		return lib
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: cannot build the reference CUDA-ABI library")
	}
	src := filepath.Join("..", "..", "kernels", "cuda")
	files, _ := filepath.Glob(filepath.Join(src, "ref", "*.c"))
	lib := filepath.Join(t.TempDir(), "libtrigrid_ref.so")
	args := append([]string{"-O2", "-std=c11", "-fPIC", "-shared", "-I", src, "-o", lib}, files...)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return lib
}

// The GPU path (compaction on the host, cleaning, orientation and counting
// in the library) must report exactly what the CPU path reports, through a
// library with the CUDA ABI.
func TestCountThroughDeviceLibrary(t *testing.T) {
	lib := deviceLibrary(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "r.bin")
	if _, _, err := run(t, "gen", "rmat", "--scale", "10", "--edge-factor", "8", "--seed", "3", "-o", bin, "-q"); err != nil {
		t.Fatal(err)
	}
	sparse := write(t, "sparse.txt", "18446744073709551615 7\n7 900000000000\n900000000000 18446744073709551615\n7 7\n5 5\n7 18446744073709551615\n")
	for _, f := range []string{bin, sparse, filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz")} {
		want := countJSON(t, "--kernel", "reference", f)
		// --verify checks the device's cleaning against the host's; a
		// device too small for the input's own ids falls back to compacting
		// on the host (and further to cleaning there).
		for _, extra := range [][]string{{}, {"--verify"}, {"--device-mem-limit", "160KiB"}, {"--device-mem-limit", "160KiB", "--verify"},
			{"--partitions", "3"}, {"--partitions", "2", "--scheme", "range"}} {
			args := append([]string{"--device", "gpu", "--cuda-lib", lib}, extra...)
			got := countJSONOn(t, append(args, f)...)
			if got.Triangles != want.Triangles || got.Edges != want.Edges || got.Vertices != want.Vertices ||
				got.Removed == nil || want.Removed == nil || *got.Removed != *want.Removed || ((len(extra) == 0 || extra[0] != "--partitions") && (got.Wedges != want.Wedges || got.MaxDegree != want.MaxDegree)) {
				t.Errorf("%s %v:\n got %+v\nwant %+v", filepath.Base(f), extra, got, want)
			}
			if got.Device == "cpu" {
				t.Errorf("%s %v: counted on the CPU", filepath.Base(f), extra)
			}
		}
	}
}

// countJSONOn is countJSON without forcing --device cpu.
func countJSONOn(t *testing.T, args ...string) pipeline.Report {
	t.Helper()
	out, stderr, err := run(t, append([]string{"count", "--json", "--progress", "none"}, args...)...)
	if err != nil {
		t.Fatalf("count %v: %v\n%s", args, err, stderr)
	}
	return decodeReport(t, out)
}
