package main

import "testing"

// Text files as editors and other systems write them count the same as
// plain LF files: a triangle each, every edge read.
func TestCountTextVariants(t *testing.T) {
	for _, tc := range []struct{ name, content string }{
		{"bom.txt", "\xef\xbb\xbf1 2\n2 3\n3 1\n"},
		{"cr.txt", "1 2\r2 3\r3 1\r"},
		{"bomcrlf.tsv", "\xef\xbb\xbf1\t2\r\n2\t3\r\n3\t1\r\n"},
		{"bom.mtx", "\xef\xbb\xbf%%MatrixMarket matrix coordinate pattern symmetric\r3 3 3\r2 1\r3 2\r3 1\r"},
	} {
		rep := countJSON(t, write(t, tc.name, tc.content))
		if rep.Triangles != 1 || rep.Edges != 3 || rep.Input.RawEdges != 3 {
			t.Errorf("%s: %d triangles, %d edges, %d raw edges; want 1, 3, 3", tc.name, rep.Triangles, rep.Edges, rep.Input.RawEdges)
		}
	}
}
