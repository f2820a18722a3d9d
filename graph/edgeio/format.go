package edgeio

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format names an edge file format.
type Format int

const (
	// FormatAuto detects the format from the content (banners, magic
	// bytes, layouts) and then the file extension.
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
	// FormatMETIS is a METIS (and Chaco) graph file: a header `n m [fmt
	// [ncon]]`, then line i lists the neighbours of vertex i (1-based).
	// Read only.
	FormatMETIS
	// FormatAdjList is `v n1 n2 ...` per line: v's neighbours, ids as in
	// an edge list. Read only.
	FormatAdjList
	// FormatDIMACS is a DIMACS graph: `p sp n m` and `a u v w` arcs (or
	// `p edge n m` and `e u v` edges), 1-based. Read only.
	FormatDIMACS
	// FormatSG is the GAP benchmark suite's serialized graph (.sg). Read
	// only.
	FormatSG
	// FormatWSG is FormatSG with a 32-bit weight after each neighbour
	// (.wsg). Read only.
	FormatWSG
)

var formatNames = [...]string{
	FormatAuto:     "auto",
	FormatEdgeList: "edgelist",
	FormatTSV:      "tsv",
	FormatMTX:      "mtx",
	FormatBin:      "bin",
	FormatMETIS:    "metis",
	FormatAdjList:  "adjlist",
	FormatDIMACS:   "dimacs",
	FormatSG:       "sg",
	FormatWSG:      "wsg",
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

func (f Format) valid() bool { return f >= FormatAuto && f <= FormatWSG }

// writable reports the formats Write writes.
func (f Format) writable() bool { return f >= FormatAuto && f <= FormatBin }

// binary reports the formats that are not text.
func (f Format) binary() bool { return f == FormatBin || f == FormatSG || f == FormatWSG }

// Compression names as they appear in ReadStats and WriteOptions. Only
// gzip and zstd are written.
const (
	compNone  = ""
	compGzip  = "gzip"
	compZstd  = "zstd"
	compBzip2 = "bzip2"
	compXz    = "xz"
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
	for _, s := range []struct{ suffix, comp string }{
		{".gz", compGzip}, {".zst", compZstd}, {".zstd", compZstd}, {".bz2", compBzip2}, {".xz", compXz},
	} {
		if strings.HasSuffix(lower, s.suffix) {
			return name[:len(name)-len(s.suffix)], s.comp
		}
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
	case ".txt", ".el", ".edges", ".edgelist", ".csv", ".snap", ".dat", ".tsv2", ".wel", ".net":
		return FormatEdgeList
	case ".graph", ".metis":
		return FormatMETIS
	case ".adjlist", ".adj":
		return FormatAdjList
	case ".gr", ".dimacs", ".col":
		return FormatDIMACS
	case ".sg":
		return FormatSG
	case ".wsg":
		return FormatWSG
	}
	return FormatAuto
}
