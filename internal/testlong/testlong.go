// Package testlong marks the tests that are too slow for the default test
// run on a 2-core machine (long dataset sweeps, large generated graphs,
// multi-process soak runs). They run when TRIGRID_LONG_TESTS=1, which
// .ci/run sets for its second pass; the default `go test ./...` skips them.
// A long test must not be the only guard of a correctness property: keep a
// small-input version of it in the default run.
package testlong

import (
	"os"
	"testing"
)

// Env is the variable that turns the long tests on.
const Env = "TRIGRID_LONG_TESTS"

// Enabled reports whether long tests run in this process.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips t unless long tests are enabled.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test: set %s=1 to run it", Env)
	}
}
