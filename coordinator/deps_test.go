package coordinator

import (
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// notBelow are the trigrid packages the coordinator's non-test files may
// not import, with those under them: it reads no graph file and loads no
// CSR array (graph), counts nothing (kernels), and meets workers and the
// pipeline only through the protocol and its Config.
var notBelow = []string{"graph", "kernels", "worker", "pipeline", "cmd", "internal/clustertest"}

// The coordinator's non-test files, whatever their build tags, import
// none of notBelow. Only direct imports are checked: partition, storage
// and counts use graph themselves, and the coordinator hands their data on.
func TestCoordinatorDependsDownward(t *testing.T) {
	const module = "github.com/trigrid/trigrid/"
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range slices.Concat(pkg.GoFiles, pkg.CgoFiles, pkg.IgnoredGoFiles) {
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
			files = append(files, f)
		}
	}
	if len(files) < 10 {
		t.Fatalf("found only %v: the check would pass vacuously", files)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(path, module)
			if !ok {
				continue
			}
			for _, p := range notBelow {
				if rel == p || strings.HasPrefix(rel, p+"/") {
					t.Errorf("%s imports %s: the coordinator depends downward only, and is handed what reads graphs and names kernels (doc.go)",
						fset.Position(imp.Pos()), path)
				}
			}
		}
	}
}
