//go:build !trigrid_faults

package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/trigrid/trigrid/worker"
)

// faultsBuilt says whether this binary has the test-only fault injection
// of faults_on.go; it has not.
const faultsBuilt = false

// faultFlags is empty in the binary people run: see faults_on.go.
type faultFlags struct{}

func (*faultFlags) add(*cobra.Command) {}

func (*faultFlags) wrap(c worker.Conn, _ *slog.Logger) worker.Conn { return c }
