package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// requireSubcommands makes every command below root that only groups
// subcommands (gen, bench, completion, ...) fail on a missing or unknown
// subcommand instead of printing its help and exiting 0, so that a script
// with a typo stops; `help TOPIC` fails on an unknown topic too. The help
// still goes to stderr with the error. Call it once all commands are added.
func requireSubcommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.RunE = helpTopic
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.HasSubCommands() || c.Runnable() {
			return
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			if len(args) == 0 {
				return fmt.Errorf("%s: missing subcommand; want one of %s", cmd.CommandPath(), subcommandNames(cmd))
			}
			msg := fmt.Sprintf("%s: unknown subcommand %q; want one of %s", cmd.CommandPath(), args[0], subcommandNames(cmd))
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return fmt.Errorf("%s", msg)
		}
	}
	walk(root)
}

func subcommandNames(c *cobra.Command) string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return strings.Join(names, ", ")
}

// helpTopic is `trigrid help [COMMAND...]`: the command's help, or an error
// naming the topic that is not a command.
func helpTopic(c *cobra.Command, args []string) error {
	root := c.Root()
	target, rest, err := root.Find(args)
	if err != nil || target == nil || len(rest) > 0 {
		return fmt.Errorf("help: unknown help topic %q; commands: %s", strings.Join(args, " "), subcommandNames(root))
	}
	return target.Help()
}
