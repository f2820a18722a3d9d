package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// echoCommand prints its --kernel and --workers flags after config binding,
// so a test can see which source won.
func echoCommand() *cobra.Command {
	var kernel string
	var workers int
	cmd := &cobra.Command{
		Use: "echo",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.Printf("kernel=%s workers=%d", kernel, workers)
			return nil
		},
	}
	cmd.Flags().StringVar(&kernel, "kernel", "default", "")
	cmd.Flags().IntVar(&workers, "workers", 0, "")
	return cmd
}

func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	root.AddCommand(echoCommand())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "trigrid.yaml")
	if err := os.WriteFile(cfgFile, []byte("kernel: fromfile\nworkers: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"default", nil, []string{"echo"}, "kernel=default workers=0"},
		{"file", nil, []string{"--config", cfgFile, "echo"}, "kernel=fromfile workers=3"},
		{"env over file", map[string]string{"TRIGRID_KERNEL": "fromenv"}, []string{"--config", cfgFile, "echo"}, "kernel=fromenv workers=3"},
		{"flag over env", map[string]string{"TRIGRID_KERNEL": "fromenv", "TRIGRID_WORKERS": "5"}, []string{"--config", cfgFile, "echo", "--kernel", "fromflag"}, "kernel=fromflag workers=5"},
		{"config from env", map[string]string{"TRIGRID_CONFIG": cfgFile}, []string{"echo"}, "kernel=fromfile workers=3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := runRoot(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("workers: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notInt := filepath.Join(dir, "notint.yaml")
	if err := os.WriteFile(notInt, []byte("workers: many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"missing file", nil, []string{"--config", filepath.Join(dir, "nope.yaml"), "echo"}, "nope.yaml"},
		{"bad yaml", nil, []string{"--config", bad, "echo"}, "bad.yaml"},
		{"bad value in file", nil, []string{"--config", notInt, "echo"}, "workers"},
		{"bad value in env", map[string]string{"TRIGRID_WORKERS": "lots"}, []string{"echo"}, "TRIGRID_WORKERS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := runRoot(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestCommas(t *testing.T) {
	for in, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1624481: "1,624,481", 18446744073709551615: "18,446,744,073,709,551,615"} {
		if got := commas(in); got != want {
			t.Errorf("commas(%d) = %q, want %q", in, got, want)
		}
	}
}

// --cpu-profile writes a pprof profile (gzip-compressed protocol buffers)
// of the command, and a path that cannot be created is an error naming
// the flag, before anything runs.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.pprof")
	rep := countJSON(t, "--cpu-profile", prof, filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"))
	if rep.Triangles != 48260 {
		t.Fatalf("%d triangles, want 48260", rep.Triangles)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("the profile (%d bytes) is not a gzip-compressed pprof profile", len(data))
	}
	_, _, err = run(t, "count", "--cpu-profile", filepath.Join(dir, "no", "such", "dir", "p"), "--device", "cpu", filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz"))
	if err == nil || !strings.Contains(err.Error(), "--cpu-profile") {
		t.Fatalf("unwritable profile path: %v; want an error naming --cpu-profile", err)
	}
}
