package api

import (
	"strings"
	"testing"
)

func TestCheckID(t *testing.T) {
	for _, ok := range []string{"w1", "node-3.example:7946", "job_0001", "a@b"} {
		if err := CheckID("id", ok); err != nil {
			t.Errorf("CheckID(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "a b", "a\x00", strings.Repeat("x", MaxNameLen+1), "ü"} {
		if err := CheckID("id", bad); err == nil {
			t.Errorf("CheckID(%q) = nil, want an error", bad)
		}
	}
}

func TestCheckFileName(t *testing.T) {
	for _, ok := range []string{"manifest.json", "b0003_0001.shard", "idmap.bin"} {
		if err := CheckFileName("name", ok); err != nil {
			t.Errorf("CheckFileName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"../etc", "..", "a..b", ".tmp-x", "/etc/passwd", "a/../b", ""} {
		if err := CheckFileName("name", bad); err == nil {
			t.Errorf("CheckFileName(%q) = nil, want an error", bad)
		}
	}
}

func TestCheckText(t *testing.T) {
	if err := CheckText("t", "auto (wetric)\tok", 64); err != nil {
		t.Errorf("CheckText: %v", err)
	}
	for _, bad := range []string{"a\nb", "\x00", "\xff", strings.Repeat("x", 65)} {
		if err := CheckText("t", bad, 64); err == nil {
			t.Errorf("CheckText(%q) = nil, want an error", bad)
		}
	}
}

func TestTruncateText(t *testing.T) {
	s := "aé" // 'é' is two bytes
	if got := TruncateText(s, 2); got != "a" {
		t.Errorf("TruncateText(%q, 2) = %q, want %q", s, got, "a")
	}
	if got := TruncateText(s, 3); got != s {
		t.Errorf("TruncateText(%q, 3) = %q", s, got)
	}
}
