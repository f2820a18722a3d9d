package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Kernel settings reach the library from the flag and the config file, show
// in the JSON report, never change the count, and bad ones are errors that
// name the setting.
func TestKernelSettingsThroughDeviceLibrary(t *testing.T) {
	lib := deviceLibrary(t)
	f := filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz")
	want := countJSON(t, "--kernel", "reference", f).Triangles
	cfg := write(t, "c.yaml", "kernel-setting:\n  - wetric_spread=16\n  - trix_ratio=1\n")
	for _, args := range [][]string{
		{"--kernel-setting", "wetric_spread=16", "--kernel-setting", "trix_ratio=1"},
		{"--kernel-setting", "wetric_spread=16,trix_ratio=1", "--partitions", "2"},
		{"--config", cfg},
	} {
		full := append([]string{"count", "--json", "--progress", "none", "--device", "gpu", "--cuda-lib", lib}, args...)
		out, stderr, err := run(t, append(full, f)...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		var rep struct {
			Triangles      uint64           `json:"triangles"`
			KernelSettings map[string]int32 `json:"kernel_settings"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Triangles != want {
			t.Errorf("%v: %d triangles, want %d", args, rep.Triangles, want)
		}
		if len(rep.KernelSettings) != 2 || rep.KernelSettings["wetric_spread"] != 16 || rep.KernelSettings["trix_ratio"] != 1 {
			t.Errorf("%v: kernel_settings = %v", args, rep.KernelSettings)
		}
	}
	// Without settings the report has no kernel_settings.
	out, _, err := run(t, "count", "--json", "--progress", "none", "--device", "gpu", "--cuda-lib", lib, f)
	if err != nil || strings.Contains(out, "kernel_settings") {
		t.Errorf("no settings: %v, %s", err, out)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--kernel-setting", "nosuch=1"}, `--kernel-setting: kernel setting "nosuch=1": unknown name`},
		{[]string{"--kernel-setting", "wetric_spread"}, `want name=value`},
		{[]string{"--kernel-setting", "wetric_spread=5"}, "wetric_spread=5: want one of 4, 8, 16, 32"},
		{[]string{"--kernel-setting", "trix_window=-2", "--partitions", "2"}, "trix_window=-2: want 0..2048"},
		{[]string{"--kernel-setting", "trix_ratio=1", "--device", "cpu"}, "--device cpu uses none"},
	} {
		args := append([]string{"count", "--progress", "none"}, c.args...)
		if !slices.Contains(c.args, "cpu") {
			args = append(args, "--device", "gpu", "--cuda-lib", lib)
		}
		_, _, err := run(t, append(args, f)...)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.msg)
		}
	}
}
