package edgeio

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
)

// utf8BOM is the byte-order mark some editors put before the first line of
// a text file. It is not part of the first line.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// crReader turns every CR that is not followed by LF into LF, so that
// text with classic Mac line endings (CR alone) has one line per line
// everywhere downstream: chunking, parsing and line numbers all split on
// LF only. CRLF passes unchanged; its CR is a blank before the line end. A
// CR that ends one read of the source is held back until the next byte
// shows which kind it is; a CR at the very end becomes LF.
//
// Data is converted in place in the caller's buffer, so a large read
// costs one scan for CR (fast when there is none) and no copy.
type crReader struct {
	r    io.Reader
	held bool  // a CR was read and not yet returned
	next int   // a byte to return before reading on, or -1
	err  error // the source's error, returned once held bytes are out
}

func newCRReader(r io.Reader) *crReader { return &crReader{r: r, next: -1} }

func (c *crReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.next >= 0 {
		p[0] = byte(c.next)
		c.next = -1
		return 1, nil
	}
	for {
		if c.err != nil {
			if c.held {
				c.held = false
				p[0] = '\n'
				return 1, nil
			}
			return 0, c.err
		}
		if c.held && len(p) == 1 {
			// No room for the held CR and the byte that decides it: read
			// that byte on its own and queue it.
			var one [1]byte
			n, err := c.r.Read(one[:])
			if err != nil {
				c.err = err
			}
			if n == 0 {
				continue
			}
			c.held = false
			switch one[0] {
			case '\n':
				p[0] = '\r'
				c.next = '\n'
			case '\r':
				p[0] = '\n'
				c.held = true
			default:
				p[0] = '\n'
				c.next = int(one[0])
			}
			return 1, nil
		}
		start := 0
		if c.held {
			start = 1
		}
		n, err := c.r.Read(p[start:])
		if err != nil {
			c.err = err
		}
		if n == 0 {
			continue
		}
		total := start + n
		if c.held {
			c.held = false
			if p[1] == '\n' {
				p[0] = '\r'
			} else {
				p[0] = '\n'
			}
		}
		if p[total-1] == '\r' {
			c.held = true
			total--
		}
		convertLoneCR(p[start:total], total < start+n)
		if total > 0 {
			return total, nil
		}
	}
}

// convertLoneCR replaces each CR of b that is not followed by LF with LF.
// A CR as the last byte of b is followed by the byte after b, which is a
// CR when more is true (the caller held it back) and so is converted too.
//
// Text without CR costs one IndexByte scan. From the first CR on, eight
// bytes are checked at a time, since CRLF text has a CR on every line.
func convertLoneCR(b []byte, more bool) {
	i := bytes.IndexByte(b, '\r')
	if i < 0 {
		return
	}
	for ; i+9 <= len(b); i += 8 {
		cr := bytesEqual(binary.LittleEndian.Uint64(b[i:]), '\r')
		if cr == 0 {
			continue
		}
		// Byte k of the word at i+1 is the byte after byte k at i.
		lone := cr &^ bytesEqual(binary.LittleEndian.Uint64(b[i+1:]), '\n')
		for lone != 0 {
			b[i+bits.TrailingZeros64(lone)/8] = '\n'
			lone &= lone - 1
		}
	}
	for ; i < len(b); i++ {
		if b[i] != '\r' {
			continue
		}
		if i+1 < len(b) {
			if b[i+1] != '\n' {
				b[i] = '\n'
			}
		} else if more {
			b[i] = '\n'
		}
	}
}

// bytesEqual returns a word with the high bit set in each byte of x that
// equals c, and no other bit set. Unlike the usual has-zero trick it is
// exact: no carry crosses from one byte into the next.
func bytesEqual(x uint64, c byte) uint64 {
	const lo7, hi = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	y := x ^ (hi >> 7 * uint64(c))
	return ^(((y & lo7) + lo7) | y) & hi
}
