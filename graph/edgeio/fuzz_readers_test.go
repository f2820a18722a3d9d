package edgeio

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph"
)

// refLines splits text as the readers do: a CR not followed by LF ends a
// line, a final line needs no newline.
func refLines(text string) []string {
	lines := strings.Split(refLoneCR(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func refBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\r' }

// refFields splits a line into fields as the readers do; ok is false for
// a field longer than they take (maxField).
func refFields(l string, commas bool) ([]string, bool) {
	f := strings.FieldsFunc(l, func(r rune) bool { return refBlank(r) || (commas && r == ',') })
	for _, x := range f {
		if len(x) > maxField {
			return nil, false
		}
	}
	return f, true
}

// refMETIS reads a METIS file by its description, line by line with
// strings and strconv; ok is false where the file is not one.
func refMETIS(text string) (edges []graph.Edge, ok bool) {
	lines := refLines(text)
	i := 0
	var hdr []string
	for ; i < len(lines); i++ {
		t := strings.TrimLeftFunc(lines[i], refBlank)
		if t == "" || t[0] == '%' {
			continue
		}
		var fine bool
		if hdr, fine = refFields(lines[i], false); !fine {
			return nil, false
		}
		i++
		break
	}
	if len(hdr) < 2 || len(hdr) > 4 {
		return nil, false
	}
	var nums [4]uint64
	for k, h := range hdr {
		v, err := strconv.ParseUint(h, 10, 64)
		if err != nil {
			return nil, false
		}
		nums[k] = v
	}
	flags := "000"
	if len(hdr) >= 3 {
		if len(hdr[2]) > 3 || strings.Trim(hdr[2], "01") != "" {
			return nil, false
		}
		flags = strings.Repeat("0", 3-len(hdr[2])) + hdr[2]
	}
	ncon := uint64(0)
	if flags[1] == '1' {
		ncon = 1
	}
	if len(hdr) == 4 {
		if flags[1] != '1' || nums[3] == 0 {
			return nil, false
		}
		ncon = nums[3]
	}
	lead := ncon
	if flags[0] == '1' {
		lead++
	}
	step := 1
	if flags[2] == '1' {
		step = 2
	}
	n, m := nums[0], nums[1]
	var vertex uint64
	for ; vertex < n && i < len(lines); i++ {
		if t := strings.TrimLeftFunc(lines[i], refBlank); t != "" && t[0] == '%' {
			continue
		}
		f, fine := refFields(lines[i], false)
		if !fine || uint64(len(f)) < lead {
			return nil, false
		}
		f = f[lead:]
		if len(f)%step != 0 {
			return nil, false
		}
		for k := 0; k < len(f); k += step {
			v, err := strconv.ParseUint(f[k], 10, 64)
			if err != nil || v == 0 || v > n {
				return nil, false
			}
			edges = append(edges, graph.Edge{U: vertex, V: v - 1})
		}
		vertex++
	}
	if vertex < n {
		return nil, false
	}
	for ; i < len(lines); i++ {
		if t := strings.TrimLeftFunc(lines[i], refBlank); t != "" && t[0] != '%' {
			return nil, false
		}
	}
	if uint64(len(edges)) != 2*m {
		return nil, false
	}
	return edges, true
}

// refAdjList reads an adjacency list by its description; bad is the
// first bad line (1-based, 0 for none), or with skip the lines skipped.
func refAdjList(text string, skip bool) (edges []graph.Edge, bad int64, tooLong bool) {
	for i, l := range refLines(text) {
		t := strings.TrimLeftFunc(l, refBlank)
		if t == "" || t[0] == '#' || t[0] == '%' {
			continue
		}
		f, fine := refFields(l, true)
		if !fine {
			return nil, 0, true
		}
		var ids []uint64
		for _, x := range f {
			v, err := strconv.ParseUint(x, 10, 64)
			if err != nil {
				ids = nil
				break
			}
			ids = append(ids, v)
		}
		if ids == nil {
			if !skip {
				return nil, int64(i + 1), false
			}
			bad++
			continue
		}
		for _, v := range ids[1:] {
			edges = append(edges, graph.Edge{U: ids[0], V: v})
		}
	}
	return edges, bad, false
}

func FuzzMETIS(f *testing.F) {
	for _, s := range []string{
		"4 6\n2 3 4\n1 3 4\n1 2 4\n1 2 3\n", "% c\n3 1 1\n2 5\n1 5\n\n", "3 1 011 2\n1 1 2 5\n1 1 1 5\n1 1\n",
		"4 6 111 1\n1 1 2 5 3 1 4 2\n1 1 1 5 3 1 4 1\n1 1 1 1 2 1 4 1\n1 1 1 2 2 1 3 1\n", "2 1\r2\r1\r", "0 0\n",
		"2 1\n2\n1\n% end\n\n", "2 1\n2\n1\n3\n", "2 1 100\n1 2\n1 1\n", "1 0\n\n", "\n\n2 1\n2\n1",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		edges, st, err := readBoth(t, data, "f.graph", ReadOptions{Format: FormatMETIS})
		text := strings.TrimPrefix(string(data), bom)
		want, ok := refMETIS(text)
		if text == "" {
			ok = true // an empty input is an empty graph, whatever its format
		}
		var re *RefusedError
		if errors.As(err, &re) && !ok {
			return // text of a refused kind, which is no METIS file either
		}
		if (err == nil) != ok {
			t.Fatalf("reader: %v; reference ok %v", err, ok)
		}
		if err != nil {
			return
		}
		if len(edges) != len(want) || (len(want) > 0 && !reflect.DeepEqual(edges, want)) {
			t.Fatalf("%d edges, the reference %d", len(edges), len(want))
		}
		for _, e := range edges {
			if e.U >= st.DeclaredVertices || e.V >= st.DeclaredVertices {
				t.Fatalf("edge %v outside the declared %d vertices", e, st.DeclaredVertices)
			}
		}
	})
}

func FuzzAdjList(f *testing.F) {
	for _, s := range []string{
		"1 2 3 4\n2 3 4\n3 4\n", "# c\n7\n7 9\r\n", "1,2,3\n4\t5, 6\n", "1 x\n2 3\n", "18446744073709551615 0\n",
		"18446744073709551616 0\n", "1 2\r2 3\r", "% k\n\n1 -2\n", ",1,2\n", "a b\n1 2\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		if sniffCompression(data) != compNone {
			return // read decompressed, not as the text the reference parses (FuzzCompressed's)
		}
		edges, st, err := readBoth(t, data, "f.adjlist", ReadOptions{Format: FormatAdjList, SkipBadLines: skip})
		want, bad, tooLong := refAdjList(strings.TrimPrefix(string(data), bom), skip)
		var re *RefusedError
		if errors.As(err, &re) && (bad > 0 || tooLong || bytes.IndexByte(data, 0) >= 0) {
			// Text of a refused kind (NUL bytes: UTF-16, binary), which is no
			// adjacency list either, whatever its comments hide.
			return
		}
		switch {
		case tooLong:
			if err == nil {
				t.Fatal("a field longer than the reader takes was read")
			}
			return
		case bad > 0 && !skip:
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != bad {
				t.Fatalf("got %v, the reference has a bad line %d", err, bad)
			}
			return
		case err != nil:
			t.Fatalf("got %v, the reference reads %d edges", err, len(want))
		}
		if len(edges) != len(want) || (len(want) > 0 && !reflect.DeepEqual(edges, want)) || (skip && st.BadLines != bad) {
			t.Fatalf("%d edges, %d bad; the reference %d, %d", len(edges), st.BadLines, len(want), bad)
		}
	})
}

func FuzzDIMACS(f *testing.F) {
	for _, s := range []string{
		"c x\np sp 3 4\na 1 2 7\na 2 1 7\na 2 3 1\na 3 1 2\n", "p edge 3 3\ne 1 2\ne 2 3\ne 3 1\n", "p col 2 1\r\ne 2 1\r\n",
		"p sp 2 1\na 1 x 1\n", "p sp 2 2\na 1 2\n", "a 1 2\n", "p max 2 1\n", "p sp 2 1\na 0 1\n", "c\n\np sp 1 0\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		edges, st, err := readBoth(t, data, "f.gr", ReadOptions{Format: FormatDIMACS, SkipBadLines: skip})
		if err != nil {
			if !strings.Contains(err.Error(), "f.gr") {
				t.Fatalf("an error without the file name: %v", err)
			}
			return
		}
		// Every arc line counts towards the declared m, read or skipped.
		var arcs int64
		for _, l := range refLines(strings.TrimPrefix(string(data), bom)) {
			if t := strings.TrimLeftFunc(l, refBlank); strings.HasPrefix(t, "a") || strings.HasPrefix(t, "e") {
				arcs++
			}
		}
		if int64(len(edges))+st.BadLines != arcs {
			t.Fatalf("%d edges and %d bad lines from %d arc lines", len(edges), st.BadLines, arcs)
		}
		for _, e := range edges {
			if e.U >= st.DeclaredVertices || e.V >= st.DeclaredVertices {
				t.Fatalf("edge %v outside the declared %d vertices", e, st.DeclaredVertices)
			}
		}
	})
}

func FuzzGAPSG(f *testing.F) {
	f.Add(gapBytes(false, 6, 4, []int64{0, 2, 4, 6, 6}, []int32{1, 2, 0, 2, 0, 1}), false)
	f.Add(gapBytes(false, 6, 4, []int64{0, 2, 4, 6, 6}, []int32{1, 9, 2, 9, 0, 9, 2, 9, 0, 9, 1, 9}), true)
	f.Add(gapBytes(true, 3, 4, []int64{0, 2, 3, 3, 3}, []int32{1, 2, 2}, []int64{0, 0, 1, 3, 3}, []int32{0, 0, 1}), false)
	f.Add(gapBytes(false, 0, 0, []int64{0}), false)
	f.Add(gapBytes(false, 1<<60, 1<<30, []int64{0}), false)
	f.Add([]byte{1}, true)
	f.Fuzz(func(t *testing.T, data []byte, weighted bool) {
		format, width := FormatSG, int64(4)
		if weighted {
			format, width = FormatWSG, 8
		}
		edges, st, err := readBoth(t, data, "f.sg", ReadOptions{Format: format})
		if err != nil || len(data) == 0 {
			return
		}
		// Read, the bytes are exactly the layout their header declares.
		e := int64(binary.LittleEndian.Uint64(data[1:]))
		n := int64(binary.LittleEndian.Uint64(data[9:]))
		h := gapHeader{directed: data[0] == 1, edges: e, nodes: n}
		if int64(len(data)) != h.size(width) || int64(len(edges)) != e || st.DeclaredVertices != uint64(n) {
			t.Fatalf("%d edges from %d bytes; header says %d neighbours, %d vertices, %d bytes", len(edges), len(data), e, n, h.size(width))
		}
		for _, x := range edges {
			if int64(x.U) >= n || int64(x.V) >= n {
				t.Fatalf("edge %v outside %d vertices", x, n)
			}
		}
	})
}

// FuzzTar: reading a tar archive gives what reading its chosen member
// alone gives, and a member is chosen only among regular files.
func FuzzTar(f *testing.F) {
	tri := []byte("1 2\n2 3\n3 1\n")
	f.Add(tarball(f, member{"tri.txt", tri}))
	f.Add(tarball(f, member{"x/README.x", []byte("r\n")}, member{"x/out.x", tri}))
	f.Add(tarball(f, member{"g/g.mtx", []byte("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n")}, member{"g/g_b.mtx", tri}))
	f.Add(tarball(f, member{"a.txt", tri}, member{"b.txt", tri}))
	f.Add(tarball(f, member{"g.graph", []byte("2 1\n2\n1\n")}, member{"LICENSE", tri}))
	f.Add(tarball(f, member{"in.tar", tarball(f, member{"g.txt", tri})}))
	f.Fuzz(func(t *testing.T, data []byte) {
		edges, st, err := Read(t.Context(), bytes.NewReader(data), "f.tar", ReadOptions{chunkSize: 16, Workers: 2})
		if err != nil || st.Archive == "" {
			return
		}
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if err != nil {
				return // a member of an archive inside this one
			}
			if h.Name != st.Member {
				continue
			}
			if h.Typeflag != tar.TypeReg || ignoredMember(h.Name) {
				t.Fatalf("member %q (type %c) was read", h.Name, h.Typeflag)
			}
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			alone, _, err := Read(t.Context(), bytes.NewReader(body), h.Name, ReadOptions{})
			if err != nil || len(alone) != len(edges) || (len(edges) > 0 && !reflect.DeepEqual(alone, edges)) {
				t.Fatalf("the member alone: %d edges, %v; in the archive %d", len(alone), err, len(edges))
			}
			return
		}
	})
}

// FuzzSniff: whatever the bytes, detection does not panic; what it
// refuses by magic is refused whatever the format asked for; and an edge
// list as Write writes it, with any ids, is never refused.
func FuzzSniff(f *testing.F) {
	for _, k := range refusedInputs {
		f.Add(k.data)
	}
	for _, s := range []string{"1 2\n", "%%MatrixMarket matrix coordinate pattern general\n1 1 0\n", "p sp 1 0\n", "TGEDGES\x00"} {
		f.Add([]byte(s))
	}
	f.Add(gapBytes(false, 2, 2, []int64{0, 1, 2}, []int32{1, 0}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"f", "f.txt", "f.sg", "f.graph"} {
			_, _ = detectFormat(data, name, name, int64(len(data)), FormatAuto)
		}
		if refuseMagic(data, "f") != nil {
			for _, format := range []Format{FormatAuto, FormatEdgeList, FormatMTX, FormatBin, FormatMETIS, FormatAdjList, FormatDIMACS, FormatSG} {
				_, _, err := Read(t.Context(), bytes.NewReader(data), "f", ReadOptions{Format: format})
				var re *RefusedError
				if !errors.As(err, &re) {
					t.Fatalf("as %v: got %v, want a refusal", format, err)
				}
			}
		}
		var edges []graph.Edge
		for i := 0; i+1 < len(data); i += 2 {
			edges = append(edges, graph.Edge{U: uint64(data[i]) << (data[i+1] % 57), V: uint64(data[i+1])})
		}
		var b bytes.Buffer
		if err := Write(&b, edges, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, _, err := Read(t.Context(), &b, "f.txt", ReadOptions{})
		if err != nil || len(got) != len(edges) || (len(edges) > 0 && !reflect.DeepEqual(got, edges)) {
			t.Fatalf("an edge list of %d edges read as %d: %v", len(edges), len(got), err)
		}
	})
}
