// Command trigrid counts triangles exactly in graph files, on the CPU or on
// GPUs, whole or through 2D partitions.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "trigrid:", err)
		os.Exit(1)
	}
}
