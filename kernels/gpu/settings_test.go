package gpu

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/kernels"
	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

func TestParseSettings(t *testing.T) {
	s, err := ParseSettings([]string{"wetric_spread=16", " trix_ratio = 1 ", "trust_warpmax=auto", "wetric_spread=8"})
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{"wetric_spread": 8, "trix_ratio": 1, "trust_warpmax": SettingAuto}
	if s.String() != want.String() {
		t.Errorf("ParseSettings = %v, want %v", s, want)
	}
	for _, bad := range []string{"wetric_spread", "=3", "nosuch=1", "wetric_spread=x", "wetric_spread=99999999999"} {
		if _, err := ParseSettings([]string{bad}); err == nil {
			t.Errorf("ParseSettings(%q) = nil error", bad)
		} else if !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseSettings(%q) = %v: the message should quote the input", bad, err)
		}
	}
	if s, err := ParseSettings(nil); s != nil || err != nil {
		t.Errorf("ParseSettings(nil) = %v, %v", s, err)
	}
}

// The library fills the defaults, keeps valid settings and rejects invalid
// ones with a message naming the setting; counts do not change.
func TestSettingsReference(t *testing.T) {
	good, _ := refLibs(t)
	lib, err := Open(Options{Path: good})
	if err != nil {
		t.Fatal(err)
	}
	def := lib.DefaultSettings()
	if len(def) != len(SettingNames()) || def["trix_ratio"] != 2 || def["wetric_spread"] != SettingAuto || def["slot_bitmap"] != 1 {
		t.Errorf("DefaultSettings = %v", def)
	}
	g := forward(t, hubEdges(300))
	whole := kernels.Subtask{IJ: g, IK: g, JK: g}
	want := mustReference(t, whole)
	for _, s := range []Settings{nil, {"wetric_spread": 16, "trust_cta_threads": 512, "trix_window": 0, "wetric_lb": SettingAuto}} {
		l, err := Open(Options{Path: good, Settings: s})
		if err != nil {
			t.Fatal(err)
		}
		c, err := l.NewCounter("wetric")
		if err != nil {
			t.Fatalf("settings %v: %v", s, err)
		}
		res, err := c.Count(t.Context(), whole)
		c.Close()
		if err != nil || res.Triangles != want {
			t.Errorf("settings %v: count %d, %v; want %d", s, res.Triangles, err, want)
		}
	}
	for s, msg := range map[string]string{
		"wetric_spread=5":      "wetric_spread=5: want one of 4, 8, 16, 32 or -1 (auto)",
		"trix_window=4096":     "trix_window=4096: want 0..2048",
		"trust_cta_threads=-1": "trust_cta_threads=-1: want one of 128, 256, 512",
	} {
		set, err := ParseSettings([]string{s})
		if err != nil {
			t.Fatal(err)
		}
		l, err := Open(Options{Path: good, Settings: set})
		if err != nil {
			t.Fatal(err)
		}
		if c, err := l.NewCounter("trix"); err == nil {
			c.Close()
			t.Errorf("%s: NewCounter succeeded", s)
		} else if !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want it to say %q", s, err, msg)
		}
	}
}

// docs/kernels.md's settings tables name every setting the library takes,
// and no other.
func TestSettingsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "kernels.md"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("^\\| `([a-z]+_[a-z0-9_]+)` \\|")
	documented := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := name.FindStringSubmatch(line); m != nil {
			documented[m[1]] = true
			if abi.SettingIndex(m[1]) < 0 {
				t.Errorf("docs/kernels.md documents %s, which is not a setting", m[1])
			}
		}
	}
	for _, n := range SettingNames() {
		if !documented[n] {
			t.Errorf("docs/kernels.md has no table row for setting %s", n)
		}
	}
}
