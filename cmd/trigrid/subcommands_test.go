package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command that groups subcommands fails on an unknown or missing
// subcommand, and says which ones exist; so do the root and `help`.
func TestUnknownSubcommandsFail(t *testing.T) {
	var groups [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() && len(path) > 0 {
			groups = append(groups, path)
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(newRootCommand(), nil)
	if len(groups) < 3 {
		t.Fatalf("found groups %v; want gen, bench and completion at least", groups)
	}
	for _, g := range groups {
		name := strings.Join(g, " ")
		_, stderr, err := run(t, append(g, "nosuch")...)
		if err == nil || !strings.Contains(err.Error(), `unknown subcommand "nosuch"`) {
			t.Errorf("%s nosuch: err = %v, want unknown subcommand", name, err)
		}
		if !strings.Contains(stderr, "Usage:") {
			t.Errorf("%s nosuch: no help on stderr: %q", name, stderr)
		}
		if _, _, err := run(t, g...); err == nil || !strings.Contains(err.Error(), "missing subcommand") {
			t.Errorf("%s: err = %v, want missing subcommand", name, err)
		}
		if _, _, err := run(t, append([]string{"help"}, append(g, "nosuch")...)...); err == nil {
			t.Errorf("help %s nosuch succeeded", name)
		}
		if _, _, err := run(t, append([]string{"help"}, g...)...); err != nil {
			t.Errorf("help %s: %v", name, err)
		}
	}
	if _, _, err := run(t, "gen", "rma"); err == nil || !strings.Contains(err.Error(), "did you mean rmat") {
		t.Errorf("gen rma: %v, want a suggestion", err)
	}
	for _, args := range [][]string{{"nosuch"}, {"help", "nosuch"}, {"version", "extra"}, {"gen", "rmat", "extra", "-o", "x.txt"}} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	if out, _, err := run(t, "help", "count"); err != nil || !strings.Contains(out, "Usage:") {
		t.Errorf("help count: %v\n%s", err, out)
	}
}
