package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var updateReference = flag.Bool("update", false, "rewrite docs/reference.md from the commands")

// otherEnv are the environment variables the code reads that are not a
// flag's TRIGRID_ twin, with what each does. TestReferenceDoc fails when
// the code reads one that is not listed here.
var otherEnv = [][2]string{
	{"TRIGRID_CUDA_LIB", "path of libtrigrid_cuda.so when --cuda-lib is not given (a standing default: `--device cpu` ignores it)"},
	{"CUDA_VISIBLE_DEVICES", "the GPUs a process may see (CUDA's own); a worker started with --devices and without it is named HOST-gpuI by default"},
	{"TRIGRID_BENCH_SCALE", "`trigrid bench` only: scales the sizes of the built-in benchmark graphs (tests and benchmarks)"},
	{"TRIGRID_S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL", "s3:// stores: the server's host:port when it is not AWS, first set wins (the URL's `endpoint=` wins over all)"},
	{"TRIGRID_S3_INSECURE", "s3:// stores: 1 for plain HTTP to the endpoint (the URL's `insecure=` wins)"},
	{"TRIGRID_S3_STYLE", "s3:// stores: `path` or `virtual` bucket addressing (the URL's `style=` wins)"},
	{"TRIGRID_S3_RETRIES", "s3:// stores: tries of a request on transient errors before giving up (default 10)"},
	{"AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN", "s3:// stores: credentials"},
	{"AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE", "s3:// stores without the variables above: the credentials file (default ~/.aws/credentials) and its profile; then the instance role on AWS"},
	{"AWS_REGION, AWS_DEFAULT_REGION", "s3:// stores: the region (the URL's `region=` wins)"},
	{"CI", "tests only: when set, tests that need ../shared/datasets fail instead of skipping"},
	{"TRIGRID_LONG_TESTS", "tests only: 1 adds the long sweeps (every dataset, more partition counts, larger graphs)"},
}

// reference renders docs/reference.md: every command's flags with their
// defaults, config keys and environment variables.
func reference() string {
	var b strings.Builder
	b.WriteString(`# Reference: commands, flags, config keys, environment

Generated from the commands by ` + "`go test ./cmd/trigrid -run TestReferenceDoc -update`" + `;
the test fails when this page and the code differ. Every flag can also be
set in the YAML config file (` + "`--config FILE` or `TRIGRID_CONFIG`" + `; the key is the
flag's name) or in the environment (` + "`TRIGRID_`" + ` and the flag's name in capitals,
` + "`-`" + ` as ` + "`_`" + `). Precedence: flag > environment > config file > default.
Operations, security and tuning are explained in [operations.md](operations.md).

`)
	root := newRootCommand()
	b.WriteString("## Global flags (every command)\n\n")
	writeFlags(&b, root.PersistentFlags())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.Hidden || s.Name() == "help" || s.Name() == "completion" {
				continue
			}
			fmt.Fprintf(&b, "## %s\n\n%s.\n\n", s.CommandPath(), strings.TrimSuffix(s.Short, "."))
			if s.HasLocalFlags() {
				writeFlags(&b, s.LocalNonPersistentFlags())
			} else {
				b.WriteString("No flags of its own.\n\n")
			}
			walk(s)
		}
	}
	walk(root)
	b.WriteString("## Other environment variables\n\n| variable | effect |\n|---|---|\n")
	for _, e := range otherEnv {
		fmt.Fprintf(&b, "| `%s` | %s |\n", e[0], e[1])
	}
	return b.String()
}

func writeFlags(b *strings.Builder, fs *pflag.FlagSet) {
	var fl []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			fl = append(fl, f)
		}
	})
	sort.Slice(fl, func(i, j int) bool { return fl[i].Name < fl[j].Name })
	b.WriteString("| flag | config key | environment | default | meaning |\n|---|---|---|---|---|\n")
	for _, f := range fl {
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name += ", `-" + f.Shorthand + "`"
		}
		def := f.DefValue
		switch {
		case def == "" || def == "[]":
			def = "—"
		default:
			def = "`" + def + "`"
		}
		env := "TRIGRID_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		fmt.Fprintf(b, "| %s | `%s` | `%s` | %s | %s |\n", name, f.Name, env, def, strings.ReplaceAll(f.Usage, "|", `\|`))
	}
	b.WriteString("\n")
}

func TestReferenceDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "reference.md")
	got := reference()
	if *updateReference {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatalf("docs/reference.md differs from the commands' flags: run go test ./cmd/trigrid -run TestReferenceDoc -update")
	}
	// Every environment variable the code reads is either a flag's twin or
	// listed in otherEnv.
	listed := map[string]bool{}
	for _, e := range otherEnv {
		for _, v := range strings.Split(e[0], ", ") {
			listed[v] = true
		}
	}
	// A flag's twin is listed with the flag.
	var twins func(c *cobra.Command)
	twins = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.PersistentFlags(), c.LocalFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				listed["TRIGRID_"+strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))] = true
			})
		}
		for _, s := range c.Commands() {
			twins(s)
		}
	}
	twins(newRootCommand())
	re := regexp.MustCompile(`(?:Getenv|LookupEnv)\("([A-Z][A-Z0-9_]*)"\)|"(TRIGRID_[A-Z0-9_]+|AWS_[A-Z0-9_]+)"`)
	root := filepath.Join("..", "..")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Test-support packages (internal/test*) configure tests, not trigrid.
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".dev" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), "test")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if v := m[1] + m[2]; !listed[v] && v != "PATH" && v != "HOME" {
				t.Errorf("%s reads $%s, which docs/reference.md does not list (add it to otherEnv)", p, v)
			}
		}
		return nil
	})
}
