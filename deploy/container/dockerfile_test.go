// Package container holds the Dockerfile's checks. No image can be pulled
// or built where the tests run (no registry is reachable), so the test
// reads the Dockerfile as data instead: its stages, base images, copies,
// build arguments and the version stamp, against the repository.
package container

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const root = "../.."

type instr struct {
	line int
	op   string // FROM, COPY, RUN, ARG, ...
	args string
}

// parse reads a Dockerfile's instructions, continuation lines joined and
// comments left out.
func parse(t *testing.T, path string) []instr {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instr
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		cont := strings.HasSuffix(l, "\\")
		cur.WriteString(strings.TrimSuffix(l, "\\"))
		cur.WriteByte(' ')
		if cont {
			continue
		}
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		op, args, _ := strings.Cut(s, " ")
		out = append(out, instr{start, strings.ToUpper(op), strings.TrimSpace(args)})
	}
	return out
}

func TestDockerfile(t *testing.T) {
	path := filepath.Join(root, "deploy", "container", "Dockerfile")
	ins := parse(t, path)
	globalArgs := map[string]string{}
	var stages []string
	var current string
	sawFrom := false
	for _, in := range ins {
		switch in.op {
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			if !sawFrom {
				globalArgs[k] = strings.Trim(v, `"`)
			}
		case "FROM":
			sawFrom = true
			f := strings.Fields(in.args)
			img := f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				current = f[2]
			} else {
				t.Errorf("line %d: FROM %s has no stage name", in.line, in.args)
			}
			stages = append(stages, current)
			img = regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(img, func(m string) string {
				return globalArgs[m[2:len(m)-1]]
			})
			name, tag, ok := strings.Cut(img, ":")
			if !ok || tag == "" || tag == "latest" || strings.Contains(tag, "$") {
				t.Errorf("line %d: base image %q is not pinned to a tag", in.line, img)
			}
			// An image named by registry host would tie the build to one
			// registry: images are named as the builder's registry finds them.
			if first, _, _ := strings.Cut(name, "/"); strings.ContainsAny(first, ".:") {
				t.Errorf("line %d: base image %q names a registry host", in.line, img)
			}
		case "COPY":
			f := strings.Fields(in.args)
			if strings.HasPrefix(f[0], "--from=") {
				from := strings.TrimPrefix(f[0], "--from=")
				if !slices.Contains(stages, from) {
					t.Errorf("line %d: COPY --from=%s names no earlier stage", in.line, from)
				}
				continue
			}
			for _, src := range f[:len(f)-1] {
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					t.Errorf("line %d: COPY source %s: %v", in.line, src, err)
				}
			}
		}
	}
	for _, want := range []string{"go", "cuda", "cpu", "gpu"} {
		if !slices.Contains(stages, want) {
			t.Errorf("no stage %q (stages %v)", want, stages)
		}
	}
	if len(stages) > 0 && stages[len(stages)-1] != "gpu" {
		t.Errorf("the default (last) stage is %q, want gpu", stages[len(stages)-1])
	}

	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The version stamp names a variable that exists in package main.
	m := regexp.MustCompile(`-X ([\w./]+)\.(\w+)=`).FindStringSubmatch(string(text))
	if m == nil {
		t.Fatal("the Go build stamps no version (-ldflags -X)")
	}
	if m[1] != "main" {
		t.Errorf("-X %s.%s: the binary's package is main", m[1], m[2])
	}
	src, err := os.ReadFile(filepath.Join(root, "cmd", "trigrid", "version.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^var ` + m[2] + ` = "`).Match(src) {
		t.Errorf("-X main.%s: cmd/trigrid/version.go has no string variable %s", m[2], m[2])
	}
	// The image's default GPU generations are the Makefile's.
	mk, err := os.ReadFile(filepath.Join(root, "kernels", "cuda", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mkArch := regexp.MustCompile(`(?m)^CUDA_ARCH \?= (.+)$`).FindSubmatch(mk)
	dfArch := regexp.MustCompile(`ARG CUDA_ARCH="([^"]+)"`).FindSubmatch(text)
	if mkArch == nil || dfArch == nil || strings.TrimSpace(string(mkArch[1])) != string(dfArch[1]) {
		t.Errorf("CUDA_ARCH: Makefile %q, Dockerfile %q", mkArch, dfArch)
	}
	for _, sm := range []string{"sm_80", "sm_86", "sm_89", "sm_90"} {
		if dfArch == nil || !strings.Contains(string(dfArch[1]), sm) {
			t.Errorf("the image's CUDA library is not built for %s", sm)
		}
	}
}

// The build context leaves out history and local build outputs.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for _, want := range []string{".git", ".dev", "kernels/cuda/build", "kernels/cuda/*.so"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore does not leave out %s", want)
		}
	}
}
