package scheduler

import (
	"go/ast"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testimports"
)

// forbidden are standard packages that would let the core see the clock,
// the disk, the network, randomness, concurrency or a log: a prefix
// forbids the package and those below it.
var forbidden = []string{
	"time", "os", "net", "syscall", "io/fs", "path/filepath", "log",
	"math/rand", "crypto/rand", "sync", "runtime", "unsafe", "plugin", "embed",
}

// allowedModule are the trigrid packages the core may import: plain data.
var allowedModule = []string{"github.com/trigrid/trigrid/api", "github.com/trigrid/trigrid/partition"}

// The core stays pure: its non-test files, whatever their build tags,
// import nothing outside the standard library but api and partition,
// none of the forbidden standard packages (so no grpc, bbolt, slog, time
// or os), and start no goroutine. Only direct imports are checked: api and
// partition carry time.Duration and file code of their own, which the core
// never calls.
func TestPure(t *testing.T) {
	fset, files := testimports.Parse(t, ".", 5)
	for _, f := range files {
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why := impure(path); why != "" {
				t.Errorf("%s imports %s: %s", fset.Position(imp.Pos()), path, why)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s starts a goroutine: the core runs on its caller's", fset.Position(n.Pos()))
			case *ast.SelectStmt:
				t.Errorf("%s selects on channels: the core waits for nothing", fset.Position(n.Pos()))
			}
			return true
		})
	}
}

// impure says why the core may not import path, or "" when it may.
func impure(path string) string {
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") { // the standard library
		for _, p := range forbidden {
			if path == p || strings.HasPrefix(path, p+"/") {
				return "the core does no I/O, reads no clock and runs no goroutines; its caller does"
			}
		}
		return ""
	}
	if slices.Contains(allowedModule, path) {
		return ""
	}
	return "the core depends only on the standard library, api and partition"
}

func TestImpureCatches(t *testing.T) {
	for _, p := range []string{"time", "os", "os/exec", "net", "net/http", "log/slog", "sync/atomic",
		"google.golang.org/grpc", "google.golang.org/grpc/codes", "go.etcd.io/bbolt",
		"github.com/trigrid/trigrid/storage", "github.com/trigrid/trigrid/graph/edgeio"} {
		if impure(p) == "" {
			t.Errorf("%s passes", p)
		}
	}
	for _, p := range []string{"fmt", "slices", "maps", "strings", "errors", "sort",
		"github.com/trigrid/trigrid/api", "github.com/trigrid/trigrid/partition"} {
		if why := impure(p); why != "" {
			t.Errorf("%s refused: %s", p, why)
		}
	}
}
