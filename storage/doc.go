// Package storage turns the blocks of a 2D partition into shards and back,
// and keeps them in a Store next to a manifest that describes the run.
//
// A shard is one block B[I][J]: an immutable, self-describing file with a
// fixed header, a degree section and a column section, each compressed with
// zstd and checksummed with xxhash64 (docs/shards.md gives the byte layout).
// A corrupted, truncated or foreign shard is always an error that names the
// shard; it never decodes into a different CSR.
//
// The manifest (manifest.json) is written last and lists every non-empty
// block with its size and whole-file checksum, so a reader that trusts the
// manifest also catches a shard replaced by one of another partitioning.
package storage
