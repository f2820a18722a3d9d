// Command trigrid counts triangles exactly in graph files, on the CPU or on
// GPUs, whole or through 2D partitions.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	os.Exit(runMain(os.Args[1:]))
}

// runMain runs one command line and returns the exit status: 0, 1 for an
// error, or 128 + the signal number when SIGINT or SIGTERM stopped the
// command (after it cleaned up).
func runMain(args []string) int {
	ctx, in := watchInterrupts(context.Background(), os.Stderr)
	root := newRootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	in.stop()
	if s := in.caught(); s != nil && err != nil {
		interruptedReport(os.Stderr, s, err)
		return exitStatus(s)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "trigrid:", err)
		return 1
	}
	return 0
}
