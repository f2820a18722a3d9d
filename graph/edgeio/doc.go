// Package edgeio reads and writes graph edge files: whitespace, tab or comma
// separated edge lists (SNAP, KONECT, GraphChallenge), Matrix Market
// coordinate files and trigrid's binary edge list, each optionally gzip or
// zstd compressed. docs/formats.md describes every format and the binary
// layout.
//
// Text is parsed on all cores: the input is cut into large chunks at line
// boundaries, chunks are parsed in parallel, and their edges are delivered in
// file order, so error line numbers are exact and memory stays bounded by the
// number of chunks in flight. Stream is the primitive; Read collects its
// batches into one slice. ReadFile reads uncompressed binary files and
// edge lists with parallel positioned reads instead (runs of whole lines
// are counted first, which places each run's edges, then parsed straight
// into the result) and streams everything else. ReadBinaryPairs32 and
// ReadFileIDs give 32-bit pairs where the ids allow, for devices that take
// the input's own ids.
package edgeio
