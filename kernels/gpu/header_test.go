package gpu

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// header reads kernels/cuda/trigrid.h: its #define constants and the
// fields of tg_settings in order (type and name).
func header(t *testing.T) (defs map[string]int64, fields [][2]string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "cuda", "trigrid.h"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	defs = map[string]int64{}
	def := regexp.MustCompile(`(?m)^#define\s+(TG_\w+)\s+\(?(-?\d+)\)?`)
	for _, m := range def.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			t.Fatalf("trigrid.h: %s %s: %v", m[1], m[2], err)
		}
		defs[m[1]] = v
	}
	start := strings.Index(text, "typedef struct tg_settings {")
	end := strings.Index(text, "} tg_settings;")
	if start < 0 || end < start {
		t.Fatal("trigrid.h: no typedef struct tg_settings { ... } tg_settings;")
	}
	body := regexp.MustCompile(`/\*.*?\*/`).ReplaceAllString(text[start+len("typedef struct tg_settings {"):end], "")
	field := regexp.MustCompile(`^\s*(\w+)\s+(\w+)\s*;\s*$`)
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m := field.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("trigrid.h: tg_settings: cannot read %q", line)
		}
		fields = append(fields, [2]string{m[1], m[2]})
	}
	return defs, fields
}

// TestHeaderConstants holds the Go mirrors of trigrid.h equal to it: ABI
// version, status codes, kernel ids, slot count, preprocessing stats and the
// settings struct's layout.
func TestHeaderConstants(t *testing.T) {
	defs, fields := header(t)
	want := map[string]int64{
		"TG_ABI_VERSION":      ABIVersion,
		"TG_OK":               tgOK,
		"TG_ERR_INVALID":      tgErrInvalid,
		"TG_ERR_CUDA":         tgErrCUDA,
		"TG_ERR_OOM":          tgErrOOM,
		"TG_ERR_NO_DEVICE":    tgErrNoDevice,
		"TG_ERR_NOT_BUILT":    tgErrNotBuilt,
		"TG_ERR_INTERNAL":     tgErrInternal,
		"TG_KERNEL_COUNT":     int64(len(kernelNames)),
		"TG_MAX_SLOTS":        maxSlots,
		"TG_PREP_VERTICES":    prepVertices,
		"TG_PREP_INPUT_PAIRS": prepInputPairs,
		"TG_PREP_SELF_LOOPS":  prepSelfLoops,
		"TG_PREP_DUPLICATES":  prepDuplicates,
		"TG_PREP_EDGES":       prepEdges,
		"TG_PREP_WEDGES":      prepWedges,
		"TG_PREP_MAX_DEGREE":  prepMaxDegree,
		"TG_PREP_MAX_FORWARD": prepMaxForward,
		"TG_PREP_ISOLATED":    prepIsolated,
		"TG_PREP_NSTATS":      prepNStats,
		"TG_SETTING_AUTO":     SettingAuto,
		"TG_SETTINGS_FIELDS":  int64(len(settingNames)),
	}
	for i, name := range kernelNames {
		if i > 0 {
			want["TG_KERNEL_"+strings.ToUpper(name)] = int64(i)
		}
	}
	for name, w := range want {
		got, ok := defs[name]
		if !ok {
			t.Errorf("trigrid.h has no %s (Go has %d)", name, w)
		} else if got != w {
			t.Errorf("%s: trigrid.h %d, Go %d", name, got, w)
		}
	}
	// Every kernel id, status and stats index of the header has its Go mirror.
	for name := range defs {
		for _, prefix := range []string{"TG_KERNEL_", "TG_ERR_", "TG_PREP_"} {
			if _, ok := want[name]; strings.HasPrefix(name, prefix) && !ok {
				t.Errorf("trigrid.h defines %s; the Go side has no mirror", name)
			}
		}
	}
	if len(fields) != len(settingNames) {
		t.Fatalf("tg_settings has %d fields, settingNames %d", len(fields), len(settingNames))
	}
	for i, f := range fields {
		if f[0] != "int32_t" {
			t.Errorf("tg_settings field %d %s is %s: Go passes int32s", i, f[1], f[0])
		}
		if f[1] != settingNames[i] {
			t.Errorf("tg_settings field %d: trigrid.h %s, Go %s", i, f[1], settingNames[i])
		}
	}
}
