package main

import "testing"

func TestParseBytes(t *testing.T) {
	good := map[string]int64{"0": 0, "1024": 1024, "1KiB": 1024, "1k": 1024, "1KB": 1000, "512MiB": 512 << 20,
		"1GiB": 1 << 30, "1.5GB": 1500000000, " 2 GiB ": 2 << 30, "1TiB": 1 << 40}
	for in, want := range good {
		got, err := parseBytes(in)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "1XB", "1e400", "NaN", "9999999TiB"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
	}
}
