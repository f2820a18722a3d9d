package abi

// settingNames are the fields of tg_settings, in order: every field is an
// int32_t, so the struct is passed as an array of len(settingNames) int32.
// header_test.go holds them equal to the header. What each does, its
// default and its valid values are stated in trigrid.h beside the field;
// the library checks values (tg_ctx_set_settings).
var settingNames = [...]string{
	"slot_bitmap",
	"trix_ratio", "trix_window", "trix_spread", "trix_minb",
	"grouptc_ratio", "grouptc_window", "grouptc_spread", "grouptc_minb",
	"trust_warpmax", "trust_cta_smem", "trust_cta_threads", "trust_bitmap",
	"wetric_erow", "wetric_bitmap", "wetric_spread", "wetric_edges", "wetric_fillrpw", "wetric_bmmin",
	"wetric_andcost", "wetric_andmin", "wetric_and4cost", "wetric_lb",
	"wetric_skipb", "wetric_rowcache", "wetric_skipa", "wetric_overlap", "wetric_narrow",
	"ranges_dense",
}

// SettingAuto is TG_SETTING_AUTO: the kernel's own rule by subtask size,
// valid for the settings trigrid.h marks "auto".
const SettingAuto = -1

// Settings is tg_settings as the library reads it: one int32 a field, in
// SettingNames' order.
type Settings [len(settingNames)]int32

// SettingNames lists the fields of tg_settings in trigrid.h's order.
func SettingNames() []string { return append([]string(nil), settingNames[:]...) }

// SettingIndex is the position of setting name in Settings, -1 when it is
// not one.
func SettingIndex(name string) int {
	for i, n := range settingNames {
		if n == name {
			return i
		}
	}
	return -1
}

// DefaultSettings are the library's defaults (tg_settings_default).
func (l *Lib) DefaultSettings() Settings {
	var s Settings
	l.settingsDefault(&s[0])
	return s
}

// SetSettings checks s and makes it the context's settings
// (tg_ctx_set_settings); a field out of range is an error naming it, the
// context's settings then unchanged.
func (c *Ctx) SetSettings(s *Settings) error {
	return c.status("tg_ctx_set_settings", c.lib.setSettings(c.h, &s[0], &c.buf[0], errBufLen))
}
