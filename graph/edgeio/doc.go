// Package edgeio reads and writes graph edge files: whitespace, tab or comma
// separated edge lists (SNAP, KONECT, GraphChallenge), Matrix Market
// coordinate files and trigrid's binary edge list, each optionally gzip or
// zstd compressed; it also reads METIS graphs, adjacency lists, DIMACS
// graphs and GAP serialized graphs, bzip2 and xz, and the one graph file
// of a tar archive, and refuses with a RefusedError the kinds of file it
// does not read (zip, GraphML, JSON, UTF-16 text...). docs/formats.md
// describes every format, how it is detected, and the binary layouts.
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
