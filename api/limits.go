package api

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Protocol is the revision of the coordinator-worker protocol. A worker
// says which one it speaks in its Hello; the coordinator refuses another.
const Protocol = 2

// Bounds on what arrives over the network. Every message field that sizes
// an allocation or names something is checked against one of these before
// it is used.
const (
	// MaxPartitions bounds P (P^3 subtasks per job).
	MaxPartitions = 1024
	// MaxSubtasks bounds a subtask index: MaxPartitions^3.
	MaxSubtasks = int64(MaxPartitions) * MaxPartitions * MaxPartitions
	// MaxAttempt bounds an attempt number.
	MaxAttempt = 1 << 20
	// MaxBatch bounds the assignments of one batch, a Pull's size and the
	// running attempts listed in one heartbeat.
	MaxBatch = 4096
	// MaxDevices and MaxKernels bound the lists of a Hello.
	MaxDevices = 1024
	// MaxWorkerStats bounds a job status's per-worker list.
	MaxWorkerStats = 1 << 16
	MaxKernels     = 64
	// MaxNameLen bounds worker, job, kernel, device and file names and
	// versions.
	MaxNameLen = 256
	// MaxURLLen bounds store URLs and graph paths.
	MaxURLLen = 4096
	// MaxErrorLen bounds an error or reason text; longer ones are cut by
	// the sender (TruncateText) and refused by the receiver.
	MaxErrorLen = 8192
	// MaxChunk bounds the data of one shard chunk.
	MaxChunk = 4 << 20
	// MaxChunkMessage bounds a whole ShardChunk message (MaxChunk of data
	// and its few header fields), the most a FetchShard or FetchCounts
	// receiver must accept; gRPC's default of 4 MiB is too small for it.
	MaxChunkMessage = MaxChunk + 64<<10
	// MaxFileSize bounds a file served by FetchShard (1 TiB).
	MaxFileSize = int64(1) << 40
	// MaxDuration bounds a reported duration (about 11.5 days).
	MaxDuration = int64(1e15)
	// MaxMessage bounds one gRPC message the coordinator receives (1 GiB):
	// a Result's per-edge partial carries a count (a varint of 1 byte or
	// more) for every edge of three blocks, so blocks of up to about 300
	// million edges fit.
	MaxMessage = 1 << 30
)

// CheckID checks a worker or job id: 1..MaxNameLen bytes of letters,
// digits and ".-_:@", not "." or "..", so an id is safe in a file name, a
// metric label and a log line.
func CheckID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if len(id) > MaxNameLen {
		return fmt.Errorf("%s is %d bytes long (at most %d)", what, len(id), MaxNameLen)
	}
	if id == "." || id == ".." {
		return fmt.Errorf("%s %q is not a name", what, id)
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '.' || r == '-' || r == '_' || r == ':' || r == '@':
		default:
			return fmt.Errorf("%s %q contains %q (allowed: letters, digits, . - _ : @)", what, id, r)
		}
	}
	return nil
}

// CheckFileName checks a plain file name in a store: what CheckID allows,
// with no ".." anywhere and no leading ".", so it cannot leave the store's
// directory or name a hidden or temporary file.
func CheckFileName(what, name string) error {
	if err := CheckID(what, name); err != nil {
		return err
	}
	if strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%s %q is not a plain file name", what, name)
	}
	return nil
}

// CheckText checks free text (a kernel name, a version, an error): valid
// UTF-8, no control characters but tab, at most max bytes.
func CheckText(what, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes long (at most %d)", what, len(s), max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return fmt.Errorf("%s contains the control character %q", what, r)
		}
	}
	return nil
}

// TruncateText cuts s to at most max bytes on a rune boundary, for senders
// of error texts.
func TruncateText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
