// Package testimports parses a package's non-test files, whatever their
// build tags, for tests that hold a package to the imports and statements
// its design allows (coordinator's downward dependencies, the scheduler's
// purity).
package testimports

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Parse parses the non-test Go files of the package in dir. It fails the
// test when it finds fewer than least files: a check over no files would
// pass vacuously.
func Parse(t testing.TB, dir string, least int) (*token.FileSet, []*ast.File) {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range slices.Concat(pkg.GoFiles, pkg.CgoFiles, pkg.IgnoredGoFiles) {
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
			names = append(names, f)
		}
	}
	if len(names) < least {
		t.Fatalf("found only %v: the check would pass vacuously", names)
	}
	fset := token.NewFileSet()
	files := make([]*ast.File, 0, len(names))
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}
