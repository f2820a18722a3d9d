package coordinator

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testimports"
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
	fset, files := testimports.Parse(t, ".", 10)
	for _, f := range files {
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
