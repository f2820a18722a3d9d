package abi

import (
	"os"
	"path/filepath"
)

// LibraryName is the file name the build produces (make -C kernels/cuda).
const LibraryName = "libtrigrid_cuda.so"

// EnvLibrary names the environment variable that points at the library.
const EnvLibrary = "TRIGRID_CUDA_LIB"

// candidates lists where to look, first match wins: the explicit path,
// $TRIGRID_CUDA_LIB, next to the executable (and ../lib beside it, the
// layout of an installed tree), then the bare name, which the dynamic
// loader resolves through LD_LIBRARY_PATH, the ldconfig cache and the
// system directories.
func candidates(explicit string) []string {
	if explicit != "" {
		return []string{explicit}
	}
	var c []string
	if env := os.Getenv(EnvLibrary); env != "" {
		c = append(c, env)
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		c = append(c, filepath.Join(dir, LibraryName), filepath.Join(dir, "..", "lib", LibraryName))
	}
	return append(c, LibraryName)
}

// isPath reports whether name is a path (tried only if it exists) rather
// than a bare name for the dynamic loader's search.
func isPath(name string) bool { return filepath.Base(name) != name }
