// Package testreflib builds kernels/cuda's plain-C reference library
// (libtrigrid_ref.so, the CUDA library's ABI on the CPU) and the same
// library reporting a wrong ABI version (libtrigrid_ref_badabi.so), for the
// tests of the packages that bind and drive that ABI (kernels/gpu and the
// packages under it) where there is no GPU.
//
// The libraries are built by kernels/cuda's Makefile (make ref ref-badabi)
// over a copy of its sources, into a directory named by the sources'
// hash under the user's cache: test processes of several packages may
// build at once, and a second run of the same sources builds nothing.
package testreflib

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/internal/testgraphs"
)

var (
	once            sync.Once
	libGood, libBad string
	buildErr        error
)

// Paths returns the reference library and its wrong-ABI twin, building
// them once per process. Without gcc or make the test is skipped (failed
// in CI, which installs them).
func Paths(t testing.TB) (good, bad string) {
	t.Helper()
	for _, tool := range []string{"gcc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testgraphs.InCI() {
				t.Fatalf("no %s: the reference library cannot be built (%v)", tool, err)
			}
			t.Skipf("no %s: the reference library cannot be built (%v)", tool, err)
		}
	}
	once.Do(build)
	if buildErr != nil {
		t.Fatalf("building the reference library: %v", buildErr)
	}
	return libGood, libBad
}

// build sets libGood and libBad, or buildErr.
func build() {
	src, err := cudaDir()
	if err != nil {
		buildErr = err
		return
	}
	files, err := sources(src)
	if err != nil {
		buildErr = err
		return
	}
	sum, err := hashOf(src, files)
	if err != nil {
		buildErr = err
		return
	}
	root, err := os.UserCacheDir()
	if err != nil {
		root = os.TempDir()
	}
	root = filepath.Join(root, "trigrid-testreflib")
	final := filepath.Join(root, sum)
	libGood, libBad = filepath.Join(final, "libtrigrid_ref.so"), filepath.Join(final, "libtrigrid_ref_badabi.so")
	if _, err := os.Stat(libBad); err == nil {
		return
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		buildErr = err
		return
	}
	tmp, err := os.MkdirTemp(root, "build-")
	if err != nil {
		buildErr = err
		return
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := copyFile(filepath.Join(src, f), filepath.Join(tmp, f)); err != nil {
			buildErr = err
			return
		}
	}
	out, err := exec.Command("make", "-s", "-C", tmp, "CC=gcc", "ref", "ref-badabi").CombinedOutput()
	if err != nil {
		buildErr = fmt.Errorf("make ref ref-badabi: %w\n%s", err, out)
		return
	}
	// Another process may have finished first: its directory is the same
	// build of the same sources.
	if err := os.Rename(tmp, final); err != nil && !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Stat(libBad); serr != nil {
			buildErr = err
		}
	}
}

// cudaDir is kernels/cuda of the module the test runs in.
func cudaDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "kernels", "cuda"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// sources lists what make ref reads, relative to src: the Makefile, the
// headers and ref/.
func sources(src string) ([]string, error) {
	files := []string{"Makefile"}
	for _, pat := range []string{"*.h", "ref/*.c", "ref/*.h"} {
		m, err := filepath.Glob(filepath.Join(src, pat))
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			rel, err := filepath.Rel(src, f)
			if err != nil {
				return nil, err
			}
			files = append(files, rel)
		}
	}
	if len(files) < 4 {
		return nil, fmt.Errorf("%s: no reference library sources (%v)", src, files)
	}
	sort.Strings(files)
	return files, nil
}

// hashOf is the hex SHA-256 of the files' names and contents, shortened.
func hashOf(src string, files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
