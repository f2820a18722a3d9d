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
	// Subtasks is the job's subtask list (nil until prepared); Settled the
	// subtasks already counted, by index.
	Subtasks []partition.Subtask `json:"-"`
	Settled  map[int]uint64      `json:"-"`
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

// recordVersion is the first byte of every sealed value.
const recordVersion = 1

// seal returns body as stored under path (bucket names, then the key):
// recordVersion, body, and the little-endian xxhash64 of path and both.
func seal(body []byte, path ...[]byte) []byte {
	out := make([]byte, 0, 1+len(body)+8)
	out = append(out, recordVersion)
	out = append(out, body...)
	return binary.LittleEndian.AppendUint64(out, sealSum(out, path))
}

// unseal returns the body of a value sealed under path, or errDamaged.
func unseal(v []byte, path ...[]byte) ([]byte, error) {
	if len(v) < 1+8 {
		return nil, fmt.Errorf("%w: %d bytes", errDamaged, len(v))
	}
	body := v[:len(v)-8]
	if sealSum(body, path) != binary.LittleEndian.Uint64(v[len(v)-8:]) {
		return nil, errDamaged
	}
	if body[0] != recordVersion {
		return nil, fmt.Errorf("record version %d, this coordinator reads %d", body[0], recordVersion)
	}
	return body[1:], nil
}

func sealSum(versioned []byte, path [][]byte) uint64 {
	d := xxhash.New()
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
