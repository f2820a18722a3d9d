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

// partialMagic starts a partial file: then the subtask's count as a
// uvarint; for each of the six slices, its length plus one as a uvarint
// (0: nil, no per-edge counts) and its counts as uvarints (most are 0 or
// small); and last the xxhash64 of the job id, the subtask index and
// everything before it, so that a file read for another subtask, or
// beside another settled count, fails its check.
const partialMagic = "TGPART03"

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

// savePartial writes the partial of subtask idx, settled at triangles,
// atomically (a temporary file renamed into place); without StateDir it
// does nothing.
func (s *Server) savePartial(id api.JobID, idx int, triangles uint64, p *api.Partial) error {
	path, err := s.partialPath(id, idx)
	if err != nil || path == "" {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b := encodePartialFile(id, idx, triangles, p)
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

// loadPartial reads subtask idx's partial file and the count it was
// saved with.
func (s *Server) loadPartial(id api.JobID, idx int) (uint64, *api.Partial, error) {
	path, err := s.partialPath(id, idx)
	if err != nil {
		return 0, nil, err
	}
	if path == "" {
		return 0, nil, os.ErrNotExist
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	n, p, err := decodePartialFile(b, id, idx)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, p, nil
}

// partialSum is the checksum of a partial file's bytes before it.
func partialSum(id api.JobID, idx int, b []byte) uint64 {
	d := xxhash.New()
	var n [binary.MaxVarintLen64]byte
	d.Write(n[:binary.PutUvarint(n[:], uint64(len(id)))])
	d.WriteString(string(id))
	d.Write(n[:binary.PutUvarint(n[:], uint64(idx))])
	d.Write(b)
	return d.Sum64()
}

func encodePartialFile(id api.JobID, idx int, triangles uint64, p *api.Partial) []byte {
	slices := [6][]uint64{p.VI, p.VJ, p.VK, p.EIJ, p.EIK, p.EJK}
	n := len(partialMagic) + 2*binary.MaxVarintLen64 + 8
	for _, v := range slices {
		n += binary.MaxVarintLen64 + 2*len(v)
	}
	b := make([]byte, 0, n)
	b = append(b, partialMagic...)
	b = binary.AppendUvarint(b, triangles)
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
	return binary.LittleEndian.AppendUint64(b, partialSum(id, idx, b))
}

func decodePartialFile(b []byte, id api.JobID, idx int) (uint64, *api.Partial, error) {
	if len(b) < len(partialMagic)+8 || string(b[:len(partialMagic)-2]) != partialMagic[:len(partialMagic)-2] {
		return 0, nil, errors.New("not a partial counts file")
	}
	if string(b[:len(partialMagic)]) != partialMagic {
		return 0, nil, fmt.Errorf("a partial counts file of another version (%q, this coordinator reads %q)", b[:len(partialMagic)], partialMagic)
	}
	body, sum := b[:len(b)-8], binary.LittleEndian.Uint64(b[len(b)-8:])
	if partialSum(id, idx, body) != sum {
		return 0, nil, errors.New("checksum mismatch (damaged, or not this subtask's)")
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
	triangles, ok := next()
	if !ok {
		return 0, nil, errors.New("truncated")
	}
	var out [6][]uint64
	for i := range out {
		l, ok := next()
		if !ok {
			return 0, nil, errors.New("truncated")
		}
		if l == 0 {
			continue
		}
		l--
		if l > uint64(len(r)) { // every count takes a byte at least
			return 0, nil, errors.New("truncated")
		}
		v := make([]uint64, l)
		for k := range v {
			if v[k], ok = next(); !ok {
				return 0, nil, errors.New("truncated")
			}
		}
		out[i] = v
	}
	if len(r) != 0 {
		return 0, nil, errors.New("bytes after the counts")
	}
	return triangles, &api.Partial{VI: out[0], VJ: out[1], VK: out[2], EIJ: out[3], EIK: out[4], EJK: out[5]}, nil
}

// restoreSums adds the saved partials of a restarted per-vertex job's
// settled subtasks to its sums and returns the settled subtasks whose
// partials were found, and how many of the others had a partial file that
// was damaged or does not match the settled count; all the others are
// counted again.
func (s *Server) restoreSums(j *jobInfo, settled map[int]uint64) (kept map[int]uint64, damaged int) {
	kept = map[int]uint64{}
	for idx, v := range settled {
		n, p, err := s.loadPartial(j.rec.ID, idx)
		if err == nil && n != v {
			err = fmt.Errorf("saved with a count of %d, settled with %d", n, v)
		}
		if err == nil {
			err = j.sums.settle(idx, p)
		}
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.log.Warn("a settled subtask's partial counts are unusable; it is counted again", "job", j.rec.ID, "subtask", idx, "err", err)
				damaged++
			}
			j.sums.reopen(idx)
			continue
		}
		kept[idx] = v
	}
	if lost := len(settled) - len(kept) - damaged; lost > 0 {
		s.log.Info("settled subtasks without saved partial counts are counted again", "job", j.rec.ID, "subtasks", lost)
	}
	return kept, damaged
}
