package gpu

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// settingNames are the fields of tg_settings (kernels/cuda/trigrid.h), in
// order: every field is an int32_t, so the struct is passed as an array of
// len(settingNames) int32. header_test.go holds them equal to the header.
// What each does, its default and its valid values are stated in trigrid.h
// beside the field; the library checks values (tg_ctx_set_settings).
var settingNames = [...]string{
	"slot_bitmap",
	"trix_ratio", "trix_window", "trix_spread", "trix_minb",
	"grouptc_ratio", "grouptc_window", "grouptc_spread", "grouptc_minb",
	"trust_warpmax", "trust_cta_smem", "trust_cta_threads", "trust_bitmap",
	"wetric_erow", "wetric_bitmap", "wetric_spread", "wetric_edges", "wetric_fillrpw", "wetric_bmmin",
	"wetric_andcost", "wetric_andmin", "wetric_and4cost", "wetric_lb",
	"wetric_skipb", "wetric_rowcache", "wetric_skipa", "wetric_overlap",
	"ranges_dense",
}

// SettingAuto is TG_SETTING_AUTO: the kernel's own rule by subtask size,
// valid for the settings trigrid.h marks "auto". ParseSetting reads "auto"
// as this value.
const SettingAuto = -1

// rawSettings is tg_settings as the library reads it.
type rawSettings [len(settingNames)]int32

// Settings override the CUDA kernels' tuning by name (the fields of
// tg_settings). Every setting changes speed only, never a count; a nil or
// empty Settings leaves the library's defaults.
type Settings map[string]int32

// SettingNames lists the settings the library takes, in trigrid.h's order.
func SettingNames() []string { return slices.Clone(settingNames[:]) }

func settingIndex(name string) int {
	for i, n := range settingNames {
		if n == name {
			return i
		}
	}
	return -1
}

// ParseSetting reads one "name=value" (value an integer, or "auto"). The
// name must be a setting; the value is checked by the library when a
// counter is made.
func ParseSetting(s string) (string, int32, error) {
	name, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", 0, fmt.Errorf("kernel setting %q: want name=value", s)
	}
	if settingIndex(name) < 0 {
		return "", 0, fmt.Errorf("kernel setting %q: unknown name %q (valid: %s)", s, name, strings.Join(settingNames[:], ", "))
	}
	val = strings.TrimSpace(val)
	if val == "auto" {
		return name, SettingAuto, nil
	}
	v, err := strconv.ParseInt(val, 10, 32)
	if err != nil {
		return "", 0, fmt.Errorf("kernel setting %q: value %q is not an integer or auto", s, val)
	}
	return name, int32(v), nil
}

// ParseSettings reads a list of "name=value"; a name given twice keeps
// the last value.
func ParseSettings(list []string) (Settings, error) {
	if len(list) == 0 {
		return nil, nil
	}
	s := Settings{}
	for _, item := range list {
		name, v, err := ParseSetting(item)
		if err != nil {
			return nil, err
		}
		s[name] = v
	}
	return s, nil
}

// String renders the settings as sorted "name=value" pairs.
func (s Settings) String() string {
	parts := make([]string, 0, len(s))
	for _, k := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, s[k]))
	}
	return strings.Join(parts, " ")
}

// raw lays s over the library's defaults.
func (l *Library) raw(s Settings) (rawSettings, error) {
	var r rawSettings
	l.settingsDefault(&r[0])
	for name, v := range s {
		i := settingIndex(name)
		if i < 0 {
			return r, fmt.Errorf("kernel setting %q: unknown name", name)
		}
		r[i] = v
	}
	return r, nil
}

// DefaultSettings are the library's defaults, every setting by name.
func (l *Library) DefaultSettings() Settings {
	var r rawSettings
	l.settingsDefault(&r[0])
	s := make(Settings, len(r))
	for i, v := range r {
		s[settingNames[i]] = v
	}
	return s
}

// applySettings installs opts.Settings on a new context.
func (l *Library) applySettings(ctx uintptr) error {
	if len(l.opts.Settings) == 0 {
		return nil
	}
	r, err := l.raw(l.opts.Settings)
	if err != nil {
		return err
	}
	buf := make([]byte, errBufLen)
	return status("tg_ctx_set_settings", l.setSettings(ctx, &r[0], &buf[0], errBufLen), buf)
}
