package edgeio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode"
)

// Every input's first bytes are looked at before anything is parsed, raw
// and again after each decompression: a compressed stream is undone, a
// tar archive is opened, a file of a kind trigrid does not read is refused
// with an error that names the kind, and a format's magic or banner
// decides the format before the file name does.

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
	xzMagic   = []byte{0xfd, '7', 'z', 'X', 'Z', 0}
	// bzip2: "BZh", the block size '1' to '9', then the first block's
	// magic (pi) or, for an empty stream, the end-of-stream magic (sqrt(pi)).
	bzip2Block = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59}
	bzip2End   = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90}
	mmBanner   = []byte("%%matrixmarket")
)

// sniffCompression names the compression the first bytes announce, ""
// for none.
func sniffCompression(head []byte) string {
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return compGzip
	case bytes.HasPrefix(head, zstdMagic):
		return compZstd
	case bytes.HasPrefix(head, xzMagic):
		return compXz
	case len(head) >= 10 && string(head[:3]) == "BZh" && head[3] >= '1' && head[3] <= '9' &&
		(bytes.Equal(head[4:10], bzip2Block) || bytes.Equal(head[4:10], bzip2End)):
		return compBzip2
	}
	return compNone
}

// isTar reports a POSIX or GNU tar archive: "ustar" at offset 257 of its
// first header block.
func isTar(head []byte) bool {
	return len(head) >= 512 && string(head[257:262]) == "ustar"
}

// RefusedError says that an input is of a kind trigrid does not read.
type RefusedError struct {
	Path string
	// Kind names what the input is ("a zip archive") or looks like
	// ("GraphML"); Looks is set for the second.
	Kind   string
	Looks  bool
	Advice string
}

func (e *RefusedError) Error() string {
	verb := "is"
	if e.Looks {
		verb = "looks like"
	}
	return fmt.Sprintf("graph/edgeio: %s: this %s %s, not a graph format trigrid reads: %s (docs/formats.md lists the formats)", e.Path, verb, e.Kind, e.Advice)
}

// magicKinds are refused by their first bytes, whatever the format asked
// for: no graph format trigrid reads starts like them.
var magicKinds = []struct{ magic, kind, advice string }{
	{"PK\x03\x04", "a zip archive", "extract the graph file from it"},
	{"PK\x05\x06", "a zip archive (an empty one)", "extract the graph file from it"},
	{"PK\x07\x08", "a zip archive", "extract the graph file from it"},
	{"7z\xbc\xaf\x27\x1c", "a 7z archive", "extract the graph file from it"},
	{"Rar!\x1a\x07", "a RAR archive", "extract the graph file from it"},
	{"\x04\x22\x4d\x18", "an lz4 stream", "decompress it, or recompress it with gzip, zstd, bzip2 or xz"},
	{"\x7fELF", "an ELF executable", "give the graph file, not a program"},
	{"\x89HDF\r\n\x1a\n", "an HDF5 file", "export its edges as an edge list"},
	{"PAR1", "a Parquet file", "export its edges as an edge list"},
	{"ARROW1", "an Arrow IPC file", "export its edges as an edge list"},
	{"%PDF-", "a PDF document", "give the graph file"},
	{"\x89PNG\r\n\x1a\n", "a PNG image", "give the graph file"},
	{"\x93NUMPY", "a NumPy array file", "write its edges as an edge list"},
	{"SQLite format 3\x00", "an SQLite database", "export its edges as an edge list"},
	{"\xff\xfe\x00\x00", "UTF-32 text", "convert it to UTF-8 (iconv -f UTF-32 -t UTF-8)"},
	{"\x00\x00\xfe\xff", "UTF-32 text", "convert it to UTF-8 (iconv -f UTF-32 -t UTF-8)"},
	{"\xff\xfe", "UTF-16 text", "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
	{"\xfe\xff", "UTF-16 text", "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)"},
}

// refuseMagic refuses a head that magicKinds name.
func refuseMagic(head []byte, name string) error {
	for _, k := range magicKinds {
		if bytes.HasPrefix(head, []byte(k.magic)) {
			return &RefusedError{Path: name, Kind: k.kind, Advice: k.advice}
		}
	}
	return nil
}

// refuseText refuses text of a kind trigrid does not read: UTF-16 without
// a byte-order mark, XML (GraphML, GEXF, HTML), JSON, GML and Pajek. The
// first line that is neither blank nor a '#' or '%' comment decides.
func refuseText(head []byte, name string) error {
	looks := func(kind, advice string) error {
		return &RefusedError{Path: name, Kind: kind, Looks: true, Advice: advice}
	}
	if utf16Like(head) {
		return looks("UTF-16 text", "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)")
	}
	line := firstContentLine(head)
	if len(line) == 0 {
		return nil
	}
	lower := bytes.ToLower(head[:min(len(head), 4096)])
	switch line[0] {
	case '<':
		switch {
		case bytes.Contains(lower, []byte("<graphml")):
			return looks("GraphML", "convert it to an edge list (networkx: write_edgelist(read_graphml(f), out, data=False))")
		case bytes.Contains(lower, []byte("<gexf")):
			return looks("GEXF", "convert it to an edge list")
		case bytes.Contains(lower, []byte("<html")) || bytes.Contains(lower, []byte("<!doctype html")):
			return looks("an HTML page (a download that failed?)", "download the graph file itself")
		}
		return looks("XML", "convert it to an edge list")
	case '[', '{':
		return looks("JSON", "convert it to an edge list, one `u v` per line")
	case '*':
		w := strings.ToLower(string(firstWord(line)))
		for _, kw := range []string{"*vertices", "*network", "*arcs", "*edges", "*arcslist", "*edgeslist", "*matrix"} {
			if w == kw {
				return looks("a Pajek .net file", "convert it to an edge list")
			}
		}
	}
	switch string(firstWord(line)) {
	case "graph", "Creator", "creator", "Version", "version":
		if gmlGraph(lower) {
			return looks("GML", "convert it to an edge list (networkx: write_edgelist(read_gml(f), out, data=False))")
		}
	}
	return nil
}

// utf16Like reports UTF-16 text without a byte-order mark: ASCII bytes
// with a NUL beside each one, in every pair of the first bytes.
func utf16Like(head []byte) bool {
	n := min(len(head), 64) &^ 1
	if n < 4 {
		return false
	}
	for _, hi := range []int{0, 1} { // the NUL is first (big-endian) or second
		ok := true
		for i := 0; i < n && ok; i += 2 {
			c := head[i+1-hi]
			ok = head[i+hi] == 0 && c != 0 && c < 0x80 && (c >= 0x20 || c == '\n' || c == '\r' || c == '\t')
		}
		if ok {
			return true
		}
	}
	return false
}

// firstContentLine returns the first line of head that is neither blank
// nor a '#' or '%' comment, without its leading blanks and line end.
func firstContentLine(head []byte) []byte {
	for len(head) > 0 {
		line := head
		if k := bytes.IndexAny(head, "\n\r"); k >= 0 {
			line, head = head[:k], head[k+1:]
		} else {
			head = nil
		}
		line = bytes.TrimLeft(line, " \t")
		if len(line) > 0 && line[0] != '#' && line[0] != '%' {
			return line
		}
	}
	return nil
}

// firstWord returns the bytes of line up to its first blank.
func firstWord(line []byte) []byte {
	if k := bytes.IndexAny(line, " \t"); k >= 0 {
		return line[:k]
	}
	return line
}

// gmlGraph reports GML's "graph [" (any blanks between) in lower.
func gmlGraph(lower []byte) bool {
	for rest := lower; ; {
		k := bytes.Index(rest, []byte("graph"))
		if k < 0 {
			return false
		}
		rest = rest[k+len("graph"):]
		if t := bytes.TrimLeftFunc(rest, unicode.IsSpace); len(t) > 0 && t[0] == '[' {
			return true
		}
	}
}

// sniffFormat returns the format that head's magic, banner or layout
// decides, FormatAuto when they decide nothing. size is the bytes of the
// content when known (-1 otherwise), which tells a weighted GAP graph
// from an unweighted one when the name does not.
func sniffFormat(head []byte, name string, size int64) Format {
	switch {
	case len(head) >= len(mmBanner) && bytes.EqualFold(head[:len(mmBanner)], mmBanner):
		return FormatMTX
	case bytes.HasPrefix(head, binMagic[:]):
		return FormatBin
	case dimacsLike(head):
		return FormatDIMACS
	}
	if h, ok := gapHeaderOf(head); ok {
		if formatFromName(name) == FormatWSG {
			return FormatWSG
		}
		if size >= 0 {
			switch size {
			case h.size(4):
				return FormatSG
			case h.size(8):
				return FormatWSG
			}
			return FormatAuto // the layout does not fit the size: not a GAP graph
		}
		return FormatSG
	}
	return FormatAuto
}

// dimacsLike reports a DIMACS file: after 'c' comment lines (and blank
// lines) comes a problem line "p WORD N M".
func dimacsLike(head []byte) bool {
	for len(head) > 0 {
		line := head
		if k := bytes.IndexByte(head, '\n'); k >= 0 {
			line, head = head[:k], head[k+1:]
		} else {
			head = nil
		}
		f := bytes.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case string(f[0]) == "c":
			continue
		case string(f[0]) == "p" && len(f) == 4:
			_, _, ok1 := parseID(f[2])
			_, _, ok2 := parseID(f[3])
			return ok1 && ok2
		}
		return false
	}
	return false
}

// detectFormat decides how the content whose first bytes are head is
// read, or refuses it. forced is the format asked for (FormatAuto:
// detect); the content's magic decides before the extension of name. dn
// names the input in messages. Containers (compression, tar) are already
// undone.
func detectFormat(head []byte, name, dn string, size int64, forced Format) (Format, error) {
	if err := refuseMagic(head, dn); err != nil {
		return 0, err
	}
	if forced.binary() {
		return forced, nil
	}
	sniffed := sniffFormat(head, name, size)
	if forced == FormatAuto && sniffed.binary() {
		return sniffed, nil
	}
	if err := refuseText(head, dn); err != nil {
		return 0, err
	}
	if forced != FormatAuto {
		return forced, nil
	}
	if sniffed != FormatAuto {
		return sniffed, nil
	}
	f := orDefault(FormatAuto, formatFromName(name))
	if (f == FormatEdgeList || f == FormatTSV) && raggedIDLines(head) {
		return 0, &RefusedError{Path: dn, Kind: "an adjacency list (lines of ids of differing lengths)", Looks: true,
			Advice: "give --format adjlist (v n1 n2 ... per line), --format metis for a METIS graph, or --format edgelist to read the first two ids of each line as an edge"}
	}
	return f, nil
}

// raggedIDLines reports text whose complete lines in head (after comments,
// blank lines and a first line that is not all ids) are all ids, but not
// the same number of them on every line, some line having three or more:
// an adjacency list or a METIS graph, whose first two ids on a line are
// not an edge. Edge lists have two ids on every line, or the same number
// of columns (weights, times) on every line.
func raggedIDLines(head []byte) bool {
	minF, maxF, lines := 1<<30, 0, 0
	first := true
	for {
		k := bytes.IndexAny(head, "\n\r")
		if k < 0 {
			break // the last line may be cut short
		}
		line := head[:k]
		head = head[k+1:]
		t := bytes.TrimLeft(line, " \t")
		if len(t) == 0 || t[0] == '#' || t[0] == '%' {
			continue
		}
		fs := bytes.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
		allIDs := true
		for _, f := range fs {
			if _, _, ok := parseID(f); !ok {
				allIDs = false
				break
			}
		}
		if !allIDs {
			if first && looksLikeHeader(line) {
				first = false
				continue
			}
			return false
		}
		first = false
		lines++
		minF, maxF = min(minF, len(fs)), max(maxF, len(fs))
	}
	return lines >= 2 && maxF >= 3 && minF != maxF
}

// gapHeader is the header of a GAP serialized graph (.sg, .wsg).
type gapHeader struct {
	directed bool
	edges    int64 // neighbours stored (each undirected edge twice)
	nodes    int64
}

// gapHeaderOf reads a GAP header from head when head has its layout: a
// bool byte, counts no id or file could exceed, a first offset of 0 and,
// for a graph with vertices, a second offset within the neighbours.
func gapHeaderOf(head []byte) (gapHeader, bool) {
	if len(head) < gapHeaderSize+8 || head[0] > 1 {
		return gapHeader{}, false
	}
	h := gapHeader{
		directed: head[0] == 1,
		edges:    int64(binary.LittleEndian.Uint64(head[1:])),
		nodes:    int64(binary.LittleEndian.Uint64(head[9:])),
	}
	if h.edges < 0 || h.edges > gapMaxEdges || h.nodes < 0 || h.nodes > gapMaxNodes ||
		binary.LittleEndian.Uint64(head[gapHeaderSize:]) != 0 {
		return gapHeader{}, false
	}
	if h.nodes > 0 && len(head) >= gapHeaderSize+16 {
		if o := binary.LittleEndian.Uint64(head[gapHeaderSize+8:]); o > uint64(h.edges) {
			return gapHeader{}, false
		}
	}
	return h, true
}

// size is the bytes of a GAP graph with this header and neighbours of
// width bytes (4, or 8 with weights).
func (h gapHeader) size(width int64) int64 {
	part := 8*(h.nodes+1) + width*h.edges
	if h.directed {
		part *= 2
	}
	return gapHeaderSize + part
}
