package gpu

import (
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/internal/testimports"
)

// The design flows one way, strategies -> devmem -> abi (doc.go): each
// layer's non-test files, whatever their build tags, import of trigrid
// only what is below them, and only abi binds the library.
func TestLayersDependDownward(t *testing.T) {
	const module = "github.com/trigrid/trigrid/"
	for _, layer := range []struct {
		dir   string
		least int
		// allowed are the trigrid packages the layer may import (a
		// trailing /... takes those under it).
		allowed []string
		// purego: the layer may load the library itself.
		purego bool
	}{
		// The binding: the C ABI and nothing of trigrid.
		{dir: "abi", least: 5, purego: true},
		// Device memory: the binding, the blocks it holds and the host's
		// memory helpers; no strategy.
		{dir: "devmem", least: 5, allowed: []string{"kernels/gpu/abi", "graph", "kernels", "internal/..."}},
		// The strategies: over the two.
		{dir: ".", least: 20, allowed: []string{"kernels/gpu/abi", "kernels/gpu/devmem", "graph", "graph/...", "kernels", "internal/..."}},
	} {
		fset, files := testimports.Parse(t, layer.dir, layer.least)
		for _, f := range files {
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == "github.com/ebitengine/purego" && !layer.purego {
					t.Errorf("%s imports %s: only kernels/gpu/abi loads the library", fset.Position(imp.Pos()), p)
				}
				rel, ok := strings.CutPrefix(p, module)
				if !ok {
					continue
				}
				if !allowedImport(rel, layer.allowed) {
					t.Errorf("%s imports %s: kernels/gpu's layers depend downward only (strategies -> devmem -> abi; doc.go)",
						fset.Position(imp.Pos()), p)
				}
			}
		}
	}
}

// allowedImport reports whether rel matches one of patterns (a trailing
// /... takes the packages under a path).
func allowedImport(rel string, patterns []string) bool {
	for _, pat := range patterns {
		if base, under := strings.CutSuffix(pat, "/..."); under {
			if rel == base || strings.HasPrefix(rel, base+"/") {
				return true
			}
			continue
		}
		if rel == pat {
			return true
		}
	}
	return false
}
