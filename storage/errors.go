package storage

import (
	"errors"
	"fmt"
)

// Sentinels classify a ShardError; test them with errors.Is.
var (
	// ErrNotShard: the bytes do not start with the shard magic.
	ErrNotShard = errors.New("not a trigrid shard")
	// ErrVersion: the shard was written by a format this build cannot read.
	ErrVersion = errors.New("unsupported shard format version")
	// ErrChecksum: a stored checksum does not match the stored bytes.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrTruncated: the data ends before a section it announces.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt: checksums pass but the content is inconsistent (counts,
	// varints, columns out of range), or a section fails to decompress.
	ErrCorrupt = errors.New("corrupt")
	// ErrMismatch: a valid shard that does not belong where it was found
	// (other partitioning, other block, sizes differing from the manifest).
	ErrMismatch = errors.New("does not match the manifest")
)

// ShardError is the error of every shard decode or load failure. Shard is
// the file name so an operator can find and replace the bad file; Reason is
// what is wrong, readable on its own.
type ShardError struct {
	Shard  string
	Reason string
	// Err is the class (one of the sentinels above) or an underlying cause
	// such as a Store error.
	Err error
}

func (e *ShardError) Error() string {
	return fmt.Sprintf("storage: %s: %s", e.Shard, e.Reason)
}

func (e *ShardError) Unwrap() error { return e.Err }

func shardErr(name string, class error, format string, args ...any) *ShardError {
	return &ShardError{Shard: name, Reason: fmt.Sprintf(format, args...), Err: class}
}
