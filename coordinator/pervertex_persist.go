package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/trigrid/trigrid/api"
)

// With StateDir set, the partial of each settled subtask of a running
// per-vertex job is kept in a file of its own (partials/INDEX under the
// job's counts directory), written after its settled count is recorded
// and removed when the subtask is reopened. A restarted coordinator adds
// the partials it finds back into the sums; a settled subtask whose file
// is missing or damaged is counted again, never left out.

// partialMagic starts a partial file: then, for each of the six slices,
// its length plus one as a uvarint (0: nil, no per-edge counts) and its
// counts as uvarints (most are 0 or small), and last the xxhash64 of
// everything before it.
const partialMagic = "TGPART02"

func (s *Server) partialPath(id api.JobID, idx int) (string, error) {
	if s.cfg.StateDir == "" {
		return "", nil
	}
	dir, err := s.countsDir(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "partials", strconv.Itoa(idx)), nil
}

// savePartial writes subtask idx's partial atomically (a temporary file
// renamed into place); without StateDir it does nothing.
func (s *Server) savePartial(id api.JobID, idx int, p *api.Partial) error {
	path, err := s.partialPath(id, idx)
	if err != nil || path == "" {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b := encodePartialFile(p)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// dropPartial removes subtask idx's partial file, if any.
func (s *Server) dropPartial(id api.JobID, idx int) {
	path, err := s.partialPath(id, idx)
	if err != nil || path == "" {
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("removing a reopened subtask's partial counts", "job", id, "subtask", idx, "err", err)
	}
}

// loadPartial reads subtask idx's partial file.
func (s *Server) loadPartial(id api.JobID, idx int) (*api.Partial, error) {
	path, err := s.partialPath(id, idx)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, os.ErrNotExist
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := decodePartialFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

func encodePartialFile(p *api.Partial) []byte {
	slices := [6][]uint64{p.VI, p.VJ, p.VK, p.EIJ, p.EIK, p.EJK}
	n := len(partialMagic) + 8
	for _, v := range slices {
		n += binary.MaxVarintLen64 + 2*len(v)
	}
	b := make([]byte, 0, n)
	b = append(b, partialMagic...)
	for _, v := range slices {
		l := uint64(len(v)) + 1
		if v == nil {
			l = 0
		}
		b = binary.AppendUvarint(b, l)
		for _, c := range v {
			b = binary.AppendUvarint(b, c)
		}
	}
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

func decodePartialFile(b []byte) (*api.Partial, error) {
	if len(b) < len(partialMagic)+8 || string(b[:len(partialMagic)]) != partialMagic {
		return nil, errors.New("not a partial counts file")
	}
	body, sum := b[:len(b)-8], binary.LittleEndian.Uint64(b[len(b)-8:])
	if xxhash.Sum64(body) != sum {
		return nil, errors.New("checksum mismatch")
	}
	r := body[len(partialMagic):]
	next := func() (uint64, bool) {
		v, k := binary.Uvarint(r)
		if k <= 0 {
			return 0, false
		}
		r = r[k:]
		return v, true
	}
	var out [6][]uint64
	for i := range out {
		l, ok := next()
		if !ok {
			return nil, errors.New("truncated")
		}
		if l == 0 {
			continue
		}
		l--
		if l > uint64(len(r)) { // every count takes a byte at least
			return nil, errors.New("truncated")
		}
		v := make([]uint64, l)
		for k := range v {
			if v[k], ok = next(); !ok {
				return nil, errors.New("truncated")
			}
		}
		out[i] = v
	}
	if len(r) != 0 {
		return nil, errors.New("bytes after the counts")
	}
	return &api.Partial{VI: out[0], VJ: out[1], VK: out[2], EIJ: out[3], EIK: out[4], EJK: out[5]}, nil
}

// restoreSums adds the saved partials of a restarted per-vertex job's
// settled subtasks to its sums and returns the settled subtasks whose
// partials were found; the others are counted again.
func (s *Server) restoreSums(j *jobInfo, settled map[int]uint64) map[int]uint64 {
	kept := map[int]uint64{}
	for idx, v := range settled {
		p, err := s.loadPartial(j.rec.ID, idx)
		if err == nil {
			err = j.sums.settle(idx, p)
		}
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("a settled subtask's partial counts are unusable; it is counted again", "job", j.rec.ID, "subtask", idx, "err", err)
			}
			j.sums.reopen(idx)
			continue
		}
		kept[idx] = v
	}
	if lost := len(settled) - len(kept); lost > 0 {
		s.log.Info("settled subtasks without saved partial counts are counted again", "job", j.rec.ID, "subtasks", lost)
	}
	return kept
}
