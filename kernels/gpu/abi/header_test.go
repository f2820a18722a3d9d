package abi

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// header reads kernels/cuda/trigrid.h: its #define constants and the
// fields of tg_settings in order (type and name).
func header(t *testing.T) (defs map[string]int64, fields [][2]string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "cuda", "trigrid.h"))
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
// version, status codes, kernel ids, slot count, preprocessing stats, the
// row streaming's, the pieces' and the ranges' constants and the settings
// struct's layout.
func TestHeaderConstants(t *testing.T) {
	defs, fields := header(t)
	want := map[string]int64{
		"TG_ABI_VERSION":         Version,
		"TG_OK":                  tgOK,
		"TG_ERR_INVALID":         tgErrInvalid,
		"TG_ERR_CUDA":            tgErrCUDA,
		"TG_ERR_OOM":             tgErrOOM,
		"TG_ERR_NO_DEVICE":       tgErrNoDevice,
		"TG_ERR_NOT_BUILT":       tgErrNotBuilt,
		"TG_ERR_INTERNAL":        tgErrInternal,
		"TG_KERNEL_COUNT":        int64(len(kernelNames)),
		"TG_MAX_SLOTS":           MaxSlots,
		"TG_PREP_VERTICES":       PrepVertices,
		"TG_PREP_INPUT_PAIRS":    PrepInputPairs,
		"TG_PREP_SELF_LOOPS":     PrepSelfLoops,
		"TG_PREP_DUPLICATES":     PrepDuplicates,
		"TG_PREP_EDGES":          PrepEdges,
		"TG_PREP_WEDGES":         PrepWedges,
		"TG_PREP_MAX_DEGREE":     PrepMaxDegree,
		"TG_PREP_MAX_FORWARD":    PrepMaxForward,
		"TG_PREP_ISOLATED":       PrepIsolated,
		"TG_PREP_NSTATS":         PrepNStats,
		"TG_SETTING_AUTO":        SettingAuto,
		"TG_SETTINGS_FIELDS":     int64(len(settingNames)),
		"TG_ROWS_MAX_SUBTASKS":   RowsMaxSubtasks,
		"TG_PIECES_PAIRS":        PiecesPairs,
		"TG_PIECES_KEYS":         PiecesKeys,
		"TG_PIECES_ORIENT":       PiecesOrient,
		"TG_PIECES_UNIQUE":       PiecesUnique,
		"TG_PIECES_DEGREES":      PiecesDegrees,
		"TG_PIECES_MIN_ITEMS":    PiecesMinItems,
		"TG_RANGES_BM_MINLEN":    RangesBitmapMinLen,
		"TG_RANGES_BM_MAX_RATIO": RangesBitmapMaxRatio,
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
		for _, prefix := range []string{"TG_KERNEL_", "TG_ERR_", "TG_PREP_", "TG_PIECES_", "TG_ROWS_", "TG_RANGES_"} {
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

// headerStruct is the fields of typedef struct NAME { ... } NAME; in
// trigrid.h, each as its type and name, comments dropped.
func headerStruct(t *testing.T, name string) [][2]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "cuda", "trigrid.h"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	open, close := "typedef struct "+name+" {", "} "+name+";"
	start, end := strings.Index(text, open), strings.Index(text, close)
	if start < 0 || end < start {
		t.Fatalf("trigrid.h: no %s ... %s", open, close)
	}
	body := regexp.MustCompile(`(?s)/\*.*?\*/`).ReplaceAllString(text[start+len(open):end], "")
	field := regexp.MustCompile(`^(const\s+)?(\w+\s*\**)\s*(\w+);$`)
	var fields [][2]string
	for _, line := range strings.Split(body, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		m := field.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("trigrid.h: %s: cannot read %q", name, line)
		}
		fields = append(fields, [2]string{strings.ReplaceAll(m[2], " ", ""), m[3]})
	}
	return fields
}

// The Go structs handed to the library mirror trigrid.h's field for
// field: the same C types (whose alignment is Go's on a 64-bit host) in
// the same order, under the same names.
func TestStructsMatchHeader(t *testing.T) {
	cType := map[reflect.Type]string{
		reflect.TypeOf((*uint64)(nil)): "uint64_t*",
		reflect.TypeOf((*uint32)(nil)): "uint32_t*",
		reflect.TypeOf(int64(0)):       "int64_t",
		reflect.TypeOf(uint64(0)):      "uint64_t",
		reflect.TypeOf(uint32(0)):      "uint32_t",
	}
	for _, tc := range []struct {
		name string
		typ  reflect.Type
	}{
		{"tg_local_out", reflect.TypeOf(localOut{})},
		{"tg_rows_subtask", reflect.TypeOf(rowsSubtask{})},
		{"tg_range_row", reflect.TypeOf(RangeRow{})},
	} {
		fields := headerStruct(t, tc.name)
		if tc.typ.NumField() != len(fields) {
			t.Errorf("%s: Go has %d fields, trigrid.h %v", tc.name, tc.typ.NumField(), fields)
			continue
		}
		for i, f := range fields {
			gf := tc.typ.Field(i)
			if cType[gf.Type] != f[0] || !strings.EqualFold(strings.ReplaceAll(f[1], "_", ""), gf.Name) {
				t.Errorf("%s field %d: Go %s %v, trigrid.h %s %s", tc.name, i, gf.Name, gf.Type, f[0], f[1])
			}
		}
	}
}

// Every entry point trigrid.h declares is bound, and nothing else.
func TestEntriesMatchHeader(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "cuda", "trigrid.h"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^(?:int32_t|void)\s+(tg_\w+)\(`)
	header := map[string]bool{}
	for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
		header[m[1]] = true
	}
	bound := map[string]bool{}
	for _, s := range (&Lib{}).symbols() {
		bound[s.name] = true
		if !header[s.name] {
			t.Errorf("%s is bound but trigrid.h declares no such entry", s.name)
		}
	}
	for name := range header {
		if !bound[name] {
			t.Errorf("trigrid.h declares %s, which abi does not bind", name)
		}
	}
	if len(header) < 20 {
		t.Fatalf("read %d entry points from trigrid.h: the pattern no longer matches its declarations", len(header))
	}
}
