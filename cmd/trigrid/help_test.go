package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Files that the help texts name as examples exist in the repository.
func TestHelpExamplesExist(t *testing.T) {
	re := regexp.MustCompile(`testdata/[^\s'"]+`)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, m := range re.FindAllString(c.Example+" "+c.Long, -1) {
			n++
			if _, err := os.Stat(filepath.Join("..", "..", m)); err != nil {
				t.Errorf("%s: help names %s: %v", c.CommandPath(), m, err)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(newRootCommand())
	if n == 0 {
		t.Fatal("no help text names a file in testdata/; the test checks nothing")
	}
}

// partition's help offers only the order it accepts.
func TestPartitionHelpOrder(t *testing.T) {
	out, _, err := run(t, "partition", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "--order") && strings.Contains(line, "degeneracy") {
			t.Errorf("partition --help offers degeneracy: %q", line)
		}
	}
	g := write(t, "k3.txt", "0 1\n1 2\n2 0\n")
	if _, _, err := run(t, "partition", "--order", "degeneracy", "-o", t.TempDir(), g); err == nil {
		t.Error("partition --order degeneracy succeeded")
	}
}
