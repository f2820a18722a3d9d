package coordinator

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// JobRecord is what the coordinator keeps of a job across restarts.
type JobRecord struct {
	ID   api.JobID
	Spec api.JobSpec
	// Store is the URL of the job's shards ("" while they are being
	// written); P and Scheme describe the partition.
	Store  string
	P      int
	Scheme string
	// PerVertex and PerEdge ask the workers for partial counts.
	PerVertex, PerEdge bool
	Created            time.Time
	// State is the job's last recorded state; Total and Err its outcome
	// once final.
	State api.JobState
	Total uint64
	Err   string
	// Faulty lists the workers found faulty while the job ran.
	Faulty []api.FaultyWorker `json:",omitempty"`
	// Recounted counts the settled subtasks that were counted again
	// because their stored count or partial counts were found damaged
	// when the coordinator restarted.
	Recounted int64 `json:",omitempty"`
	// CountsFiles is the xxhash64 of each counts file of a done
	// per-vertex job, by file name; a file is served only while it
	// matches.
	CountsFiles map[string]uint64 `json:",omitempty"`
	// PerWorker and CoordinatorCPU are an ended job's per-worker sums
	// and the coordinator's CPU time while it ran (api.JobStatus).
	PerWorker      []api.WorkerStats `json:",omitempty"`
	CoordinatorCPU time.Duration     `json:",omitempty"`
	// Subtasks is the job's subtask list (nil until prepared); Settled the
	// subtasks already counted, by index, and SettledBy the accepted
	// attempt of those whose entry names one.
	Subtasks  []partition.Subtask `json:"-"`
	Settled   map[int]uint64      `json:"-"`
	SettledBy map[int]SettledBy   `json:"-"`
	// Damaged lists the stored settled entries that Jobs left out of
	// Settled; their subtasks are counted again.
	Damaged []DamagedSettled `json:"-"`
}

// DamagedSettled is a stored settled entry that failed its check (or
// names no subtask of its job).
type DamagedSettled struct {
	// Index is the subtask its key names, -1 when it names none.
	Index int
	Key   []byte
	Err   error
}

func encodeRecord(r JobRecord) ([]byte, error) {
	if r.ID == "" {
		return nil, errors.New("coordinator: state: job with an empty id")
	}
	return json.Marshal(r)
}

// The first byte of every sealed value is its version: recordVersion for
// a job's record and subtask list and for a settled count alone (8
// bytes), settledVersion for a settled count with its accepted attempt
// (encodeSettled).
const (
	recordVersion  = 1
	settledVersion = 2
)

// seal returns body as stored under path (bucket names, then the key):
// recordVersion, body, and the little-endian xxhash64 of path and both.
func seal(body []byte, path ...[]byte) []byte { return sealAs(recordVersion, body, path...) }

func sealAs(version byte, body []byte, path ...[]byte) []byte {
	out := make([]byte, 0, 1+len(body)+8)
	out = append(out, version)
	out = append(out, body...)
	return binary.LittleEndian.AppendUint64(out, sealSum(out, path))
}

// appendSealed appends to dst the value that seals the bytes dst holds
// from start on (its version byte first) under path, and returns the
// grown dst and the sealed value within it.
func appendSealed(dst []byte, start int, path ...[]byte) ([]byte, []byte) {
	dst = binary.LittleEndian.AppendUint64(dst, sealSum(dst[start:], path))
	return dst, dst[start:len(dst):len(dst)]
}

// unseal returns the body of a value of recordVersion sealed under path,
// or errDamaged.
func unseal(v []byte, path ...[]byte) ([]byte, error) {
	version, body, err := unsealAny(v, path...)
	if err == nil && version != recordVersion {
		err = fmt.Errorf("record version %d, this coordinator reads %d here", version, recordVersion)
	}
	return body, err
}

// unsealAny returns the version and body of a value sealed under path.
func unsealAny(v []byte, path ...[]byte) (byte, []byte, error) {
	if len(v) < 1+8 {
		return 0, nil, fmt.Errorf("%w: %d bytes", errDamaged, len(v))
	}
	body := v[:len(v)-8]
	if sealSum(body, path) != binary.LittleEndian.Uint64(v[len(v)-8:]) {
		return 0, nil, errDamaged
	}
	return body[0], body[1:], nil
}

// SettledBy is the attempt whose count settled a subtask: its worker, its
// times and when its result arrived.
type SettledBy struct {
	Worker api.WorkerID
	Times  api.AttemptTimes
	End    time.Time
}

// encodeSettled is a settled value of settledVersion: the count (8 bytes
// big-endian), the worker's name (a uvarint length, then its bytes), and
// as varints the fetch, decode, upload, kernel and busy nanoseconds, the
// device index and the result's arrival in Unix nanoseconds.
func encodeSettled(v uint64, by SettledBy) []byte {
	return appendSettled(make([]byte, 0, 8+1+len(by.Worker)+7*4), v, by)
}

// appendSettled appends encodeSettled(v, by) to b.
func appendSettled(b []byte, v uint64, by SettledBy) []byte {
	b = binary.BigEndian.AppendUint64(b, v)
	b = binary.AppendUvarint(b, uint64(len(by.Worker)))
	b = append(b, by.Worker...)
	t := by.Times
	var end int64
	if !by.End.IsZero() {
		end = by.End.UnixNano()
	}
	for _, x := range []int64{int64(t.Fetch), int64(t.Decode), int64(t.Upload), int64(t.KernelTime), int64(t.Busy), int64(t.Device), end} {
		b = binary.AppendVarint(b, x)
	}
	return b
}

// decodeSettled reads a settled value's body of the given version.
func decodeSettled(version byte, b []byte) (uint64, *SettledBy, error) {
	switch {
	case version == recordVersion && len(b) == 8:
		return binary.BigEndian.Uint64(b), nil, nil
	case version == recordVersion:
		return 0, nil, fmt.Errorf("a count of %d bytes", len(b))
	case version != settledVersion:
		return 0, nil, fmt.Errorf("record version %d, this coordinator reads %d or %d here", version, recordVersion, settledVersion)
	case len(b) < 8:
		return 0, nil, fmt.Errorf("a settled entry of %d bytes", len(b))
	}
	v, rest := binary.BigEndian.Uint64(b), b[8:]
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > api.MaxNameLen || n > uint64(len(rest)-k) {
		return 0, nil, errors.New("a settled entry's worker name is truncated")
	}
	by := &SettledBy{Worker: api.WorkerID(rest[k : k+int(n)])}
	rest = rest[k+int(n):]
	var x [7]int64
	for i := range x {
		y, k := binary.Varint(rest)
		if k <= 0 {
			return 0, nil, errors.New("a settled entry's times are truncated")
		}
		x[i], rest = y, rest[k:]
	}
	if len(rest) != 0 {
		return 0, nil, fmt.Errorf("%d bytes after a settled entry", len(rest))
	}
	for _, d := range x[:5] {
		if d < 0 || d > api.MaxDuration {
			return 0, nil, fmt.Errorf("a settled entry's time %d is out of range", d)
		}
	}
	if x[5] < 0 || x[5] >= api.MaxDevices {
		return 0, nil, fmt.Errorf("a settled entry's device %d is out of range", x[5])
	}
	by.Times = api.AttemptTimes{Fetch: time.Duration(x[0]), Decode: time.Duration(x[1]), Upload: time.Duration(x[2]),
		KernelTime: time.Duration(x[3]), Busy: time.Duration(x[4]), Device: int(x[5])}
	if x[6] != 0 {
		by.End = time.Unix(0, x[6])
	}
	return v, by, nil
}

func sealSum(versioned []byte, path [][]byte) uint64 {
	var d xxhash.Digest
	d.Reset()
	var n [binary.MaxVarintLen64]byte
	for _, p := range path {
		d.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		d.Write(p)
	}
	d.Write(versioned)
	return d.Sum64()
}

// encodeSubtasks writes a count then, per subtask, I, J, K, Edges, Work,
// TailOffset as varints and Clip as a byte.
func encodeSubtasks(ts []partition.Subtask) []byte {
	b := binary.AppendUvarint(nil, uint64(len(ts)))
	for _, t := range ts {
		for _, v := range []int64{int64(t.I), int64(t.J), int64(t.K), t.Edges, t.Work, t.TailOffset} {
			b = binary.AppendVarint(b, v)
		}
		if t.Clip {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

func decodeSubtasks(b []byte) ([]partition.Subtask, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("bad subtask count")
	}
	b = b[k:]
	out := make([]partition.Subtask, 0, n)
	for i := range n {
		var v [6]int64
		for f := range v {
			x, k := binary.Varint(b)
			if k <= 0 {
				return nil, fmt.Errorf("subtask %d: truncated", i)
			}
			v[f], b = x, b[k:]
		}
		if len(b) == 0 || b[0] > 1 {
			return nil, fmt.Errorf("subtask %d: bad clip flag", i)
		}
		const maxGroup = 1 << 20
		for _, g := range v[:3] {
			if g < 0 || g >= maxGroup {
				return nil, fmt.Errorf("subtask %d: group %d out of range", i, g)
			}
		}
		out = append(out, partition.Subtask{I: int(v[0]), J: int(v[1]), K: int(v[2]), Edges: v[3], Work: v[4],
			TailOffset: v[5], Clip: b[0] == 1})
		b = b[1:]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the last subtask", len(b))
	}
	return out, nil
}
