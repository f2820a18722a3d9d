// Package edgeio reads and writes graph edge files: whitespace, tab or comma
// separated edge lists (SNAP, KONECT, GraphChallenge), Matrix Market
// coordinate files and trigrid's binary edge list, each optionally gzip or
// zstd compressed. docs/formats.md describes every format and the binary
// layout.
//
// Text is parsed on all cores: the input is cut into large chunks at line
// boundaries, chunks are parsed in parallel, and their edges are delivered in
// file order, so error line numbers are exact and memory stays bounded by the
// number of chunks in flight. Stream is the primitive; ReadFile and Read
// collect its batches into one slice.
package edgeio
