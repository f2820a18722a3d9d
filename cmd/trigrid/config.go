package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// flagSources names, for each flag whose value came from the environment
// or the config file, where it came from: "TRIGRID_ORDER" or
// "trigrid.yaml: key order". Flags set on the command line or left at
// their defaults are absent.
type flagSources map[string]string

// sourceAnnotation marks a flag whose value came from the environment or
// the config file rather than the command line.
const sourceAnnotation = "trigrid-source"

// onCommandLine reports whether the user typed flag name for this run. A
// value from the environment or the config file is a standing default: it
// applies where it is relevant and is not an error where it is not (a
// TRIGRID_CUDA_LIB in the environment does not make --device cpu fail).
func onCommandLine(cmd *cobra.Command, name string) bool {
	f := cmd.Flags().Lookup(name)
	return f != nil && f.Changed && f.Annotations[sourceAnnotation] == nil
}

// bindConfig gives every flag the user did not set on the command line the
// value from the environment or the config file, in that order, so a command
// reads only its flags. A missing --config file is an error; no --config
// means no file. A key of the file that is no flag of any command is an
// error naming the closest flag. It returns where each value came from.
func bindConfig(cmd *cobra.Command, configFile string) (flagSources, error) {
	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if configFile == "" {
		configFile = os.Getenv(envPrefix + "_CONFIG")
	}
	if configFile != "" {
		v.SetConfigFile(configFile)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("--config %s: %w", configFile, pe.Err)
			}
			return nil, fmt.Errorf("--config %s: %w", configFile, err)
		}
		if err := checkConfigKeys(cmd.Root(), configFile, v.AllKeys()); err != nil {
			return nil, err
		}
	}
	src := flagSources{}
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if firstErr != nil || f.Changed || f.Name == "config" || f.Name == "help" {
			return
		}
		if !v.IsSet(f.Name) {
			return
		}
		label := configFile + ": key " + f.Name
		if _, ok := os.LookupEnv(envName(f.Name)); ok {
			label = envName(f.Name)
		}
		s := configValueString(v.Get(f.Name))
		if err := cmd.Flags().Set(f.Name, s); err != nil {
			firstErr = fmt.Errorf("%s: %w", label, err)
			return
		}
		src[f.Name] = label
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[sourceAnnotation] = []string{label}
	})
	return src, firstErr
}

// checkConfigKeys refuses keys that are no flag of any command, naming the
// closest one: a misspelt key would otherwise be ignored silently. Keys of
// other commands' flags are accepted, so one file can serve every command.
func checkConfigKeys(root *cobra.Command, file string, keys []string) error {
	var names []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) {
			if f.Name != "config" && f.Name != "help" {
				names = append(names, f.Name)
			}
		}
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	slices.Sort(names)
	names = slices.Compact(names)
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(names, k) {
			continue
		}
		if k == "config" {
			return fmt.Errorf("%s: key config: a config file cannot name another one", file)
		}
		return fmt.Errorf("%s: unknown key %q (did you mean %q?)", file, k, closest(k, names))
	}
	return nil
}

// closest returns the name nearest to s by edit distance.
func closest(s string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		if d := editDistance(s, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// attribute rewrites the mentions of a flag ("--order") in err's message
// into the flag's source ("TRIGRID_ORDER", "FILE: key order") when its
// value came from the environment or the config file, so that a bad value
// names the place where the user can fix it. errors.Is and As still see
// the original error.
func (src flagSources) attribute(err error) error {
	if err == nil || len(src) == 0 {
		return err
	}
	msg := err.Error()
	out := msg
	for name, label := range src {
		out = replaceFlag(out, "--"+name, label)
	}
	if out == msg {
		return err
	}
	return &sourcedError{msg: out, err: err}
}

// replaceFlag replaces whole-word occurrences of flag in s by label.
func replaceFlag(s, flag, label string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, flag)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(flag)
		if end < len(s) && isFlagChar(s[end]) {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(label)
		s = s[end:]
	}
}

func isFlagChar(c byte) bool {
	return c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

type sourcedError struct {
	msg string
	err error
}

func (e *sourcedError) Error() string { return e.msg }
func (e *sourcedError) Unwrap() error { return e.err }

func envName(flag string) string {
	return envPrefix + "_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// configValueString renders a YAML or environment value the way the flag
// parser expects it; lists become comma-separated.
func configValueString(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	default:
		return fmt.Sprint(x)
	}
}
