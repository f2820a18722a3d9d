package edgeio

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// Format names an edge file format.
type Format int

const (
	// FormatAuto detects the format from the content (Matrix Market banner,
	// binary magic) and then the file extension.
	FormatAuto Format = iota
	// FormatEdgeList is `u v [ignored...]` per line, separated by spaces,
	// tabs or commas. Writing uses one space.
	FormatEdgeList
	// FormatTSV reads like FormatEdgeList; writing uses a tab.
	FormatTSV
	// FormatMTX is Matrix Market coordinate format (1-based indices).
	FormatMTX
	// FormatBin is trigrid's binary edge list (docs/formats.md).
	FormatBin
)

var formatNames = [...]string{
	FormatAuto:     "auto",
	FormatEdgeList: "edgelist",
	FormatTSV:      "tsv",
	FormatMTX:      "mtx",
	FormatBin:      "bin",
}

// String returns the name ParseFormat accepts.
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat parses a format name as used on the command line.
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if strings.EqualFold(s, name) {
			return Format(f), nil
		}
	}
	return FormatAuto, fmt.Errorf("graph/edgeio: unknown format %q (valid: %s)", s, strings.Join(formatNames[:], ", "))
}

func (f Format) valid() bool { return f >= FormatAuto && f <= FormatBin }

// Compression names as they appear in ReadStats and WriteOptions.
const (
	compNone = ""
	compGzip = "gzip"
	compZstd = "zstd"
)

// parseCompression accepts the names a user might reasonably type.
func parseCompression(s string) (string, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return compNone, nil
	case "gzip", "gz":
		return compGzip, nil
	case "zstd", "zst":
		return compZstd, nil
	}
	return "", fmt.Errorf("graph/edgeio: unknown compression %q (valid: none, gzip, zstd)", s)
}

// splitCompression strips a compression suffix from a file name and
// returns the compression it implies.
func splitCompression(name string) (base, comp string) {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".gz"):
		return name[:len(name)-3], compGzip
	case strings.HasSuffix(lower, ".zst"):
		return name[:len(name)-4], compZstd
	case strings.HasSuffix(lower, ".zstd"):
		return name[:len(name)-5], compZstd
	}
	return name, compNone
}

// formatFromName guesses the format from the extension once compression
// suffixes are gone; FormatAuto means the name says nothing.
func formatFromName(name string) Format {
	base, _ := splitCompression(name)
	switch strings.ToLower(filepath.Ext(base)) {
	case ".mtx", ".mm":
		return FormatMTX
	case ".bin", ".tgb":
		return FormatBin
	case ".tsv", ".tab":
		return FormatTSV
	case ".txt", ".el", ".edges", ".edgelist", ".csv", ".snap", ".dat", ".tsv2", ".wel", ".net", ".graph":
		return FormatEdgeList
	}
	return FormatAuto
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	mmBanner  = []byte("%%matrixmarket")
)

// sniffCompression looks at the first bytes of the raw file.
func sniffCompression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return compGzip
	case bytes.HasPrefix(head, zstdMagic):
		return compZstd
	}
	return compNone
}

// sniffFormat looks at the first bytes of the decompressed content; a
// banner or magic is decisive, anything else leaves the decision to the
// extension.
func sniffFormat(head []byte) Format {
	if len(head) >= len(mmBanner) && bytes.EqualFold(head[:len(mmBanner)], mmBanner) {
		return FormatMTX
	}
	if bytes.HasPrefix(head, binMagic[:]) {
		return FormatBin
	}
	return FormatAuto
}
