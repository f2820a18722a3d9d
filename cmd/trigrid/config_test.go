package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad value names where it came from: the flag, the environment variable
// or the config file and key.
func TestBadValuesNameTheirSource(t *testing.T) {
	g := write(t, "k3.txt", "0 1\n1 2\n2 0\n")
	dir := t.TempDir()
	cfg := func(name, body string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, body)
		return p
	}
	orderFile := cfg("order.yaml", "order: banana\n")
	workersFile := cfg("workers.yaml", "workers: -3\n")
	levelFile := cfg("level.yaml", "log-level: loud\n")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"flag", nil, []string{"count", "--order", "banana", g}, []string{"--order: ", "unknown order"}},
		{"env", map[string]string{"TRIGRID_ORDER": "banana"}, []string{"count", g}, []string{"TRIGRID_ORDER: ", "unknown order"}},
		{"file", nil, []string{"count", "--config", orderFile, g}, []string{orderFile + ": key order: ", "unknown order"}},
		{"config from env", map[string]string{"TRIGRID_CONFIG": orderFile}, []string{"count", g}, []string{orderFile + ": key order: "}},
		{"env over file", map[string]string{"TRIGRID_ORDER": "apple"}, []string{"count", "--config", orderFile, g}, []string{"TRIGRID_ORDER: ", `"apple"`}},
		{"file range", nil, []string{"count", "--config", workersFile, g}, []string{workersFile + ": key workers -3: must be"}},
		{"env range", map[string]string{"TRIGRID_PARTITIONS": "-1"}, []string{"count", g}, []string{"TRIGRID_PARTITIONS -1: must be"}},
		{"env syntax", map[string]string{"TRIGRID_WORKERS": "lots"}, []string{"count", g}, []string{"TRIGRID_WORKERS: ", `"lots"`}},
		{"env log level", map[string]string{"TRIGRID_LOG_LEVEL": "loud"}, []string{"count", g}, []string{"TRIGRID_LOG_LEVEL", "loud"}},
		{"file log level", nil, []string{"count", "--config", levelFile, g}, []string{levelFile + ": key log-level", "loud"}},
		{"env device", map[string]string{"TRIGRID_DEVICE": "tpu"}, []string{"count", g}, []string{"TRIGRID_DEVICE tpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, _, err := run(t, append(tt.args[:1:1], append([]string{"--progress", "none"}, tt.args[1:]...)...)...)
			if err == nil {
				t.Fatalf("%v succeeded", tt.args)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// A config key that is no flag of any command is an error naming the
// closest flag; a key of another command's flag is accepted, so one file
// serves every command.
func TestConfigKeys(t *testing.T) {
	g := write(t, "k3.txt", "0 1\n1 2\n2 0\n")
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	writeFile(t, typo, "ordr: degree\n")
	if _, _, err := run(t, "count", "--progress", "none", "--config", typo, g); err == nil ||
		!strings.Contains(err.Error(), typo+`: unknown key "ordr" (did you mean "order"?)`) {
		t.Errorf("typo: %v", err)
	}
	nested := filepath.Join(dir, "nested.yaml")
	writeFile(t, nested, "kernel:\n  name: hash\n")
	if _, _, err := run(t, "count", "--progress", "none", "--config", nested, g); err == nil || !strings.Contains(err.Error(), `"kernel.name"`) {
		t.Errorf("nested key: %v", err)
	}
	shared := filepath.Join(dir, "shared.yaml")
	writeFile(t, shared, "mem-limit: 1GiB\nkernel: hash\nskip-bad-lines: true\n")
	out, _, err := run(t, "count", "--json", "--device", "cpu", "--progress", "none", "--config", shared, g)
	if err != nil {
		t.Fatalf("a key of another command's flag: %v", err)
	}
	if rep := decodeReport(t, out); rep.Triangles != 1 || rep.Kernel != "hash" {
		t.Errorf("got %d triangles with %s, want 1 with hash from the file", rep.Triangles, rep.Kernel)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"order", "kernel", "workers", "skip-bad-lines", "device-mem-limit", "mem-limit"}
	for in, want := range map[string]string{"ordr": "order", "kernal": "kernel", "worker": "workers",
		"skip_bad_lines": "skip-bad-lines", "device-mem": "device-mem-limit", "memlimit": "mem-limit"} {
		if got := closest(in, names); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance = %d, want 3", d)
	}
}

func TestReplaceFlag(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--order: bad", "ENV: bad"},
		{"--order-x --order", "--order-x ENV"},
		{"--device auto --kernel x", "--device auto --kernel x"},
		{"set --order, then", "set ENV, then"},
	} {
		if got := replaceFlag(c.in, "--order", "ENV"); got != c.want {
			t.Errorf("replaceFlag(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
