package coordinator

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/partition"
)

// StateFile is the name of the coordinator's job database in its state
// directory.
const StateFile = "coordinator.db"

// stateFormat identifies a trigrid coordinator database and its layout
// version; a database without it, or with another, is refused.
const stateFormat = "trigrid-coordinator-state/1"

// Layout: bucket "meta" holds key "format" = stateFormat. Bucket "jobs"
// holds one bucket per job id with key "record" (JSON JobRecord without
// subtasks), key "subtasks" (binary, see encodeSubtasks) and bucket
// "settled" (8-byte big-endian index -> 8-byte big-endian count).
var (
	bucketMeta     = []byte("meta")
	bucketJobs     = []byte("jobs")
	bucketSettled  = []byte("settled")
	keyFormat      = []byte("format")
	keyRecord      = []byte("record")
	keySubtasks    = []byte("subtasks")
	errNotOurState = errors.New("not a trigrid coordinator state file")
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
	// Subtasks is the job's subtask list (nil until prepared); Settled the
	// subtasks already counted, by index.
	Subtasks []partition.Subtask `json:"-"`
	Settled  map[int]uint64      `json:"-"`
}

// StateDB persists jobs and their settled subtasks in a bbolt database
// under the coordinator's state directory. Methods are safe for
// concurrent use (bbolt serialises writers).
type StateDB struct {
	db   *bolt.DB
	path string
}

// OpenState opens (creating if needed) the job database in dir. A file
// that is not a trigrid coordinator database, a damaged one, or one
// another process holds open is an error naming the file.
func OpenState(dir string) (*StateDB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("coordinator: state directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, StateFile)
	db, err := openBolt(path)
	if err != nil {
		return nil, fmt.Errorf("coordinator: state file %s: %w", path, err)
	}
	s := &StateDB{db: db, path: path}
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			if c := tx.Cursor(); func() bool { k, _ := c.First(); return k != nil }() {
				return errNotOurState
			}
			if meta, err = tx.CreateBucket(bucketMeta); err != nil {
				return err
			}
			if err := meta.Put(keyFormat, []byte(stateFormat)); err != nil {
				return err
			}
		}
		if f := string(meta.Get(keyFormat)); f != stateFormat {
			if strings.HasPrefix(f, "trigrid-coordinator-state/") {
				return fmt.Errorf("state format %q, this coordinator reads %q", f, stateFormat)
			}
			return errNotOurState
		}
		_, err := tx.CreateBucketIfNotExists(bucketJobs)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("coordinator: state file %s: %w", path, err)
	}
	return s, nil
}

// openBolt opens a bbolt file, turning its panics on some damaged files
// into errors.
func openBolt(path string) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("damaged database: %v", r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("in use by another process (is another coordinator running with this --state?)")
	}
	return db, err
}

// Path is the database file's path.
func (s *StateDB) Path() string { return s.path }

// Close closes the database.
func (s *StateDB) Close() error { return s.db.Close() }

// PutJob records a job (creating or replacing its record; the subtask
// list is written when non-nil, settled subtasks are kept).
func (s *StateDB) PutJob(r JobRecord) error {
	if r.ID == "" {
		return errors.New("coordinator: state: job with an empty id")
	}
	rec, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketJobs).CreateBucketIfNotExists([]byte(r.ID))
		if err != nil {
			return err
		}
		if err := b.Put(keyRecord, rec); err != nil {
			return err
		}
		if r.Subtasks != nil {
			if err := b.Put(keySubtasks, encodeSubtasks(r.Subtasks)); err != nil {
				return err
			}
		}
		_, err = b.CreateBucketIfNotExists(bucketSettled)
		return err
	})
}

// SettledChange is one subtask's settled count to record, or (Forget) to
// remove.
type SettledChange struct {
	Ref       api.SubtaskRef
	Triangles uint64
	Forget    bool
}

// RecordSettled writes a batch of settled subtasks in one transaction,
// which callers make before telling anyone the subtasks are done.
func (s *StateDB) RecordSettled(changes []SettledChange) error {
	if len(changes) == 0 {
		return nil
	}
	return s.update(func(tx *bolt.Tx) error {
		for _, c := range changes {
			jb := tx.Bucket(bucketJobs).Bucket([]byte(c.Ref.Job))
			if jb == nil {
				return fmt.Errorf("coordinator: state: settled subtask of unknown job %s", c.Ref.Job)
			}
			b := jb.Bucket(bucketSettled)
			key := binary.BigEndian.AppendUint64(nil, uint64(c.Ref.Index))
			var err error
			if c.Forget {
				err = b.Delete(key)
			} else {
				err = b.Put(key, binary.BigEndian.AppendUint64(nil, c.Triangles))
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteJob removes a job and everything recorded of it.
func (s *StateDB) DeleteJob(id api.JobID) error {
	return s.update(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketJobs).DeleteBucket([]byte(id))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// Jobs reads every recorded job, with its subtasks and settled counts,
// ordered by creation time.
func (s *StateDB) Jobs() ([]JobRecord, error) {
	var out []JobRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEachBucket(func(name []byte) error {
			b := tx.Bucket(bucketJobs).Bucket(name)
			var r JobRecord
			if err := json.Unmarshal(b.Get(keyRecord), &r); err != nil {
				return fmt.Errorf("job %q: record: %w", name, err)
			}
			if r.ID != api.JobID(name) {
				return fmt.Errorf("job %q: record names job %q", name, r.ID)
			}
			if raw := b.Get(keySubtasks); raw != nil {
				tasks, err := decodeSubtasks(raw)
				if err != nil {
					return fmt.Errorf("job %q: subtasks: %w", name, err)
				}
				r.Subtasks = tasks
			}
			r.Settled = map[int]uint64{}
			if sb := b.Bucket(bucketSettled); sb != nil {
				err := sb.ForEach(func(k, v []byte) error {
					if len(k) != 8 || len(v) != 8 {
						return fmt.Errorf("job %q: settled entry of %d/%d bytes, want 8/8", name, len(k), len(v))
					}
					idx := binary.BigEndian.Uint64(k)
					if idx >= uint64(len(r.Subtasks)) {
						return fmt.Errorf("job %q: settled subtask %d of %d", name, idx, len(r.Subtasks))
					}
					r.Settled[int(idx)] = binary.BigEndian.Uint64(v)
					return nil
				})
				if err != nil {
					return err
				}
			}
			out = append(out, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("coordinator: state file %s: %w", s.path, err)
	}
	sortRecords(out)
	return out, nil
}

func sortRecords(rs []JobRecord) {
	for i := 1; i < len(rs); i++ {
		for k := i; k > 0 && (rs[k].Created.Before(rs[k-1].Created) ||
			(rs[k].Created.Equal(rs[k-1].Created) && rs[k].ID < rs[k-1].ID)); k-- {
			rs[k], rs[k-1] = rs[k-1], rs[k]
		}
	}
}

func (s *StateDB) update(fn func(*bolt.Tx) error) error {
	if err := s.db.Update(fn); err != nil {
		return fmt.Errorf("coordinator: state file %s: %w", s.path, err)
	}
	return nil
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
