package coordinator

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/trigrid/trigrid/api"
)

// StateFile is the name of the coordinator's job database in its state
// directory.
const StateFile = "coordinator.db"

// stateFormat identifies a trigrid coordinator database and its layout
// version (stateVersion); a database without it, or with another, is
// refused.
const (
	stateFormatPrefix = "trigrid-coordinator-state/"
	stateVersion      = 3
	stateFormat       = "trigrid-coordinator-state/3"
	// stateFormatV2 differs only in having no settled values of
	// settledVersion; OpenState upgrades it in place.
	stateFormatV2 = "trigrid-coordinator-state/2"
)

// Layout: bucket "meta" holds key "format" = stateFormat. Bucket "jobs"
// holds one bucket per job id with key "record" (the JobRecord without
// its subtasks, as JSON), key "subtasks" (see encodeSubtasks) and bucket
// "settled" (8-byte big-endian subtask index -> the count and its accepted
// attempt, encodeSettled; or, written by layout 2, the 8-byte big-endian
// count alone).
// Every value in "jobs" is sealed (see seal): it carries a version byte
// and an xxhash64 of its bucket path, its key and its bytes, so that a
// damaged value, or one that a damaged key puts under another job or
// subtask, fails its check instead of being read.
var (
	bucketMeta     = []byte("meta")
	bucketJobs     = []byte("jobs")
	bucketSettled  = []byte("settled")
	keyFormat      = []byte("format")
	keyRecord      = []byte("record")
	keySubtasks    = []byte("subtasks")
	errNotOurState = errors.New("not a trigrid coordinator state file")
	errDamaged     = errors.New("damaged (checksum mismatch)")
)

// StateDB persists jobs and their settled subtasks in a bbolt database
// under the coordinator's state directory. Methods are safe for
// concurrent use (bbolt serialises writers).
type StateDB struct {
	db   *bolt.DB
	path string
	// writeFault, when set (by tests), runs before every write; its error
	// fails the write as a full disk would.
	writeFault atomic.Pointer[func() error]
	// committed, when set (before the first write), hears how long each
	// write transaction that committed took.
	committed func(time.Duration)
}

// OpenState opens (creating if needed) the job database in dir. A file
// that is not a trigrid coordinator database, an empty or damaged one,
// one from another version of the layout, or one another process holds
// open is an error naming the file. Only a missing file starts a new
// database.
func OpenState(dir string) (*StateDB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("coordinator: state directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, StateFile)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil, fmt.Errorf("coordinator: state file %s: empty (0 bytes), so not a database; only a missing file starts a new one (remove it to start with no jobs)", path)
	}
	db, err := openBolt(path)
	if err != nil {
		return nil, fmt.Errorf("coordinator: state file %s: %w", path, err)
	}
	s := &StateDB{db: db, path: path}
	err = safely(func() error {
		return db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			if meta == nil {
				if k, _ := tx.Cursor().First(); k != nil {
					return errNotOurState
				}
				if meta, err = tx.CreateBucket(bucketMeta); err != nil {
					return err
				}
				if err := meta.Put(keyFormat, []byte(stateFormat)); err != nil {
					return err
				}
				_, err := tx.CreateBucket(bucketJobs)
				return err
			}
			if err := checkFormat(meta.Get(keyFormat)); err != nil {
				return err
			}
			if string(meta.Get(keyFormat)) == stateFormatV2 {
				if err := meta.Put(keyFormat, []byte(stateFormat)); err != nil {
					return err
				}
			}
			if tx.Bucket(bucketJobs) == nil {
				return errors.New("bucket jobs is missing (damaged)")
			}
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				if b == nil || !bytes.Equal(name, bucketMeta) && !bytes.Equal(name, bucketJobs) {
					return fmt.Errorf("unexpected bucket %s (damaged)", printable(name))
				}
				return nil
			})
		})
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("coordinator: state file %s: %w", path, err)
	}
	return s, nil
}

// checkFormat accepts stateFormat and stateFormatV2 and says what any
// other format is.
func checkFormat(f []byte) error {
	if string(f) == stateFormat || string(f) == stateFormatV2 {
		return nil
	}
	v, ok := strings.CutPrefix(string(f), stateFormatPrefix)
	n, err := strconv.Atoi(v)
	switch {
	case !ok || err != nil:
		return errNotOurState
	case n < stateVersion:
		return fmt.Errorf("state format %q is from an older trigrid, whose stored counts carry no checksums; this coordinator reads %q: "+
			"finish its jobs with the version that wrote it, or move the file aside to start with no jobs", f, stateFormat)
	}
	return fmt.Errorf("state format %q, this coordinator reads %q (the file is from a newer trigrid)", f, stateFormat)
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
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("in use by another process (is another coordinator running with this --state?)")
	}
	return db, err
}

// safely runs fn, turning a panic or a memory fault (bbolt reading a
// damaged page) into an error.
func safely(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("damaged database: %v", r)
		}
	}()
	return fn()
}

// printable is b as text when it is printable, else quoted.
func printable(b []byte) string {
	s := string(b)
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '/' || r == '"' || r == unicode.ReplacementChar {
			return strconv.Quote(s)
		}
	}
	return s
}

// Path is the database file's path.
func (s *StateDB) Path() string { return s.path }

// Close closes the database.
func (s *StateDB) Close() error { return s.db.Close() }

// PutJob records a job (creating or replacing its record; the subtask
// list is written when non-nil, settled subtasks are kept).
func (s *StateDB) PutJob(r JobRecord) error {
	rec, err := encodeRecord(r)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		_, err := putJob(tx, r, rec)
		return err
	})
}

// ReplaceSettled records a job as PutJob does and replaces its settled
// subtasks with r.Settled, in one transaction.
func (s *StateDB) ReplaceSettled(r JobRecord) error {
	rec, err := encodeRecord(r)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := putJob(tx, r, rec)
		if err != nil {
			return err
		}
		if err := b.DeleteBucket(bucketSettled); err != nil {
			return err
		}
		sb, err := b.CreateBucket(bucketSettled)
		if err != nil {
			return err
		}
		for idx, v := range r.Settled {
			var by *SettledBy
			if b, ok := r.SettledBy[idx]; ok {
				by = &b
			}
			if err := putSettled(sb, r.ID, idx, v, by); err != nil {
				return err
			}
		}
		return nil
	})
}

// putJob writes a job's record (and its subtasks when non-nil) and
// returns its bucket, which has a settled bucket.
func putJob(tx *bolt.Tx, r JobRecord, rec []byte) (*bolt.Bucket, error) {
	id := []byte(r.ID)
	b, err := tx.Bucket(bucketJobs).CreateBucketIfNotExists(id)
	if err != nil {
		return nil, err
	}
	if err := b.Put(keyRecord, seal(rec, bucketJobs, id, keyRecord)); err != nil {
		return nil, err
	}
	if r.Subtasks != nil {
		if err := b.Put(keySubtasks, seal(encodeSubtasks(r.Subtasks), bucketJobs, id, keySubtasks)); err != nil {
			return nil, err
		}
	}
	_, err = b.CreateBucketIfNotExists(bucketSettled)
	return b, err
}

// putSettled writes a settled count, with its accepted attempt when by is
// set.
func putSettled(b *bolt.Bucket, job api.JobID, idx int, v uint64, by *SettledBy) error {
	key := binary.BigEndian.AppendUint64(nil, uint64(idx))
	if by == nil {
		return b.Put(key, seal(binary.BigEndian.AppendUint64(nil, v), bucketJobs, []byte(job), bucketSettled, key))
	}
	return b.Put(key, sealAs(settledVersion, encodeSettled(v, *by), bucketJobs, []byte(job), bucketSettled, key))
}

// SettledChange is one subtask's settled count to record, with the
// attempt that counted it (By, when known), or (Forget) to remove.
type SettledChange struct {
	Ref       api.SubtaskRef
	Triangles uint64
	By        *SettledBy
	Forget    bool
}

// RecordSettled writes a batch of settled subtasks in one transaction,
// which callers make before telling anyone the subtasks are done.
func (s *StateDB) RecordSettled(changes []SettledChange) error {
	if len(changes) == 0 {
		return nil
	}
	return s.update(func(tx *bolt.Tx) error {
		// Keys and values live in one buffer until the commit (bbolt
		// keeps what it is given); it grows by appending, never
		// overwriting what a put holds.
		buf := make([]byte, 0, len(changes)*64)
		var job api.JobID
		var b *bolt.Bucket
		var jobKey []byte
		for _, c := range changes {
			if b == nil || c.Ref.Job != job {
				job, jobKey = c.Ref.Job, []byte(c.Ref.Job)
				jb := tx.Bucket(bucketJobs).Bucket(jobKey)
				if jb == nil {
					return fmt.Errorf("coordinator: state: settled subtask of unknown job %s", c.Ref.Job)
				}
				b = jb.Bucket(bucketSettled)
				// Subtasks settle mostly in index order: fuller pages.
				b.FillPercent = 0.9
			}
			at := len(buf)
			buf = binary.BigEndian.AppendUint64(buf, uint64(c.Ref.Index))
			key := buf[at:len(buf):len(buf)]
			if c.Forget {
				if err := b.Delete(key); err != nil {
					return err
				}
				continue
			}
			at = len(buf)
			if c.By == nil {
				buf = binary.BigEndian.AppendUint64(append(buf, recordVersion), c.Triangles)
			} else {
				buf = appendSettled(append(buf, settledVersion), c.Triangles, *c.By)
			}
			var val []byte
			buf, val = appendSealed(buf, at, bucketJobs, jobKey, bucketSettled, key)
			if err := b.Put(key, val); err != nil {
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
		if errors.Is(err, berrors.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// Jobs reads every recorded job, with its subtasks and settled counts,
// ordered by creation time. A settled entry that fails its check is left
// out of Settled and listed in Damaged (its subtask can be counted
// again); any other damage (a job's record, which holds its outcome, or
// its subtask list) is an error naming the job, the bucket and the key.
func (s *StateDB) Jobs() ([]JobRecord, error) {
	var out []JobRecord
	err := safely(func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			jobs := tx.Bucket(bucketJobs)
			if jobs == nil {
				return errors.New("bucket jobs is missing (damaged)")
			}
			return jobs.ForEach(func(name, v []byte) error {
				b := jobs.Bucket(name)
				if v != nil || b == nil {
					return fmt.Errorf("bucket jobs, key %s: a value where a job's bucket belongs (damaged)", printable(name))
				}
				r, err := readJob(name, b)
				if err != nil {
					return err
				}
				out = append(out, r)
				return nil
			})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("coordinator: state file %s: %w", s.path, err)
	}
	sortRecords(out)
	return out, nil
}

// readJob reads the job in bucket jobs/name.
func readJob(name []byte, b *bolt.Bucket) (JobRecord, error) {
	var r JobRecord
	fail := func(key []byte, err error) error {
		return fmt.Errorf("job %q: bucket jobs/%s, key %s: %w", name, printable(name), printable(key), err)
	}
	err := b.ForEach(func(k, v []byte) error {
		switch {
		case v != nil && (bytes.Equal(k, keyRecord) || bytes.Equal(k, keySubtasks)), v == nil && bytes.Equal(k, bucketSettled):
			return nil
		}
		return fail(k, errors.New("unexpected key (damaged)"))
	})
	if err != nil {
		return r, err
	}
	raw := b.Get(keyRecord)
	if raw == nil {
		return r, fail(keyRecord, errors.New("missing (damaged)"))
	}
	body, err := unseal(raw, bucketJobs, name, keyRecord)
	if err == nil {
		err = json.Unmarshal(body, &r)
	}
	if err == nil && r.ID != api.JobID(name) {
		err = fmt.Errorf("names job %q", r.ID)
	}
	if err != nil {
		return r, fail(keyRecord, err)
	}
	if raw := b.Get(keySubtasks); raw != nil {
		body, err := unseal(raw, bucketJobs, name, keySubtasks)
		if err == nil {
			r.Subtasks, err = decodeSubtasks(body)
		}
		if err != nil {
			return r, fail(keySubtasks, err)
		}
	}
	r.Settled = map[int]uint64{}
	sb := b.Bucket(bucketSettled)
	if sb == nil {
		return r, nil
	}
	err = sb.ForEach(func(k, v []byte) error {
		idx := -1
		if len(k) == 8 {
			if x := binary.BigEndian.Uint64(k); x < uint64(len(r.Subtasks)) {
				idx = int(x)
			}
		}
		var n uint64
		var by *SettledBy
		var err error
		if v == nil {
			err = errors.New("a bucket where a count belongs (damaged)")
		} else {
			var body []byte
			var version byte
			if version, body, err = unsealAny(v, bucketJobs, name, bucketSettled, k); err == nil {
				n, by, err = decodeSettled(version, body)
			}
		}
		if err == nil && idx < 0 {
			err = fmt.Errorf("names no subtask of the job's %d", len(r.Subtasks))
		}
		if err != nil {
			r.Damaged = append(r.Damaged, DamagedSettled{Index: idx, Key: bytes.Clone(k), Err: err})
			return nil
		}
		r.Settled[idx] = n
		if by != nil {
			if r.SettledBy == nil {
				r.SettledBy = map[int]SettledBy{}
			}
			r.SettledBy[idx] = *by
		}
		return nil
	})
	return r, err
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
	start := time.Now()
	err := safely(func() error {
		if f := s.writeFault.Load(); f != nil {
			if err := (*f)(); err != nil {
				return err
			}
		}
		return s.db.Update(fn)
	})
	if err != nil {
		return fmt.Errorf("coordinator: state file %s: %w", s.path, err)
	}
	if s.committed != nil {
		s.committed(time.Since(start))
	}
	return nil
}
