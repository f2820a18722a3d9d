package gpu

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/trigrid/trigrid/kernels/gpu/abi"
)

// SettingAuto is TG_SETTING_AUTO: the kernel's own rule by subtask size,
// valid for the settings trigrid.h marks "auto". ParseSetting reads "auto"
// as this value.
const SettingAuto = abi.SettingAuto

// Settings override the CUDA kernels' tuning by name (the fields of
// tg_settings). Every setting changes speed only, never a count; a nil or
// empty Settings leaves the library's defaults.
type Settings map[string]int32

// SettingNames lists the settings the library takes, in trigrid.h's order
// (the fields of tg_settings; what each does, its default and its valid
// values are stated in trigrid.h beside the field).
func SettingNames() []string { return abi.SettingNames() }

// ParseSetting reads one "name=value" (value an integer, or "auto"). The
// name must be a setting; the value is checked by the library when a
// counter is made.
func ParseSetting(s string) (string, int32, error) {
	name, val, ok := strings.Cut(strings.TrimSpace(s), "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", 0, fmt.Errorf("kernel setting %q: want name=value", s)
	}
	if abi.SettingIndex(name) < 0 {
		return "", 0, fmt.Errorf("kernel setting %q: unknown name %q (valid: %s)", s, name, strings.Join(abi.SettingNames(), ", "))
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
func (l *Library) raw(s Settings) (abi.Settings, error) {
	r := l.abi.DefaultSettings()
	for name, v := range s {
		i := abi.SettingIndex(name)
		if i < 0 {
			return r, fmt.Errorf("kernel setting %q: unknown name", name)
		}
		r[i] = v
	}
	return r, nil
}

// DefaultSettings are the library's defaults, every setting by name.
func (l *Library) DefaultSettings() Settings {
	r := l.abi.DefaultSettings()
	names := abi.SettingNames()
	s := make(Settings, len(r))
	for i, v := range r {
		s[names[i]] = v
	}
	return s
}

// applySettings installs opts.Settings on a new context.
func (l *Library) applySettings(ctx *abi.Ctx) error {
	if len(l.opts.Settings) == 0 {
		return nil
	}
	r, err := l.raw(l.opts.Settings)
	if err != nil {
		return err
	}
	return ctx.SetSettings(&r)
}
