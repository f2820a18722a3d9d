package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// checksumPrefix names the hash of Manifest.Checksum, so that another
// hash can be introduced without ambiguity.
const checksumPrefix = "sha256:"

// ErrManifestChecksum: a manifest's content does not match its checksum
// (edited or corrupted), or it has none.
var ErrManifestChecksum = fmt.Errorf("manifest checksum mismatch")

// computeChecksum hashes the canonical JSON of m (encoding/json's output of
// the parsed fields) with Checksum cleared. Hashing the parsed value rather
// than the file's bytes keeps the checksum independent of indentation,
// and every field the reader acts on is covered.
func (m *Manifest) computeChecksum() (string, error) {
	c := *m
	c.Checksum = ""
	data, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("storage: manifest: %w", err)
	}
	sum := sha256.Sum256(data)
	return checksumPrefix + hex.EncodeToString(sum[:]), nil
}

// Seal sets m.Checksum over m's current content. WriteManifest calls it;
// a manifest changed after Seal no longer verifies.
func (m *Manifest) Seal() error {
	sum, err := m.computeChecksum()
	if err != nil {
		return err
	}
	m.Checksum = sum
	return nil
}

// VerifyChecksum checks m.Checksum against m's content. A missing or
// different checksum is an error wrapping ErrManifestChecksum.
func (m *Manifest) VerifyChecksum() error {
	if m.Checksum == "" {
		return fmt.Errorf("storage: manifest: no checksum: %w", ErrManifestChecksum)
	}
	if !strings.HasPrefix(m.Checksum, checksumPrefix) {
		return fmt.Errorf("storage: manifest: checksum %q is not %s followed by hex: %w", m.Checksum, checksumPrefix, ErrManifestChecksum)
	}
	sum, err := m.computeChecksum()
	if err != nil {
		return err
	}
	if sum != m.Checksum {
		return fmt.Errorf("storage: manifest: content hashes to %s but the manifest records %s; it was edited or corrupted after it was written (re-partition the graph): %w",
			sum, m.Checksum, ErrManifestChecksum)
	}
	return nil
}
