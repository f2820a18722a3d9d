package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// rewriteManifest applies edit to the stored manifest's generic JSON form
// and stores the result, as someone editing the file by hand would.
func rewriteManifest(t *testing.T, s Store, edit func(doc map[string]any)) {
	t.Helper()
	ctx := context.Background()
	data, err := s.Get(ctx, ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.MarshalIndent(doc, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, ManifestName, out); err != nil {
		t.Fatal(err)
	}
}

func TestManifestChecksum(t *testing.T) {
	ctx := context.Background()
	g := rmatForward(10, 8, 5)
	tests := []struct {
		name string
		edit func(doc map[string]any)
		want string // "" = must still open
	}{
		{"reindented", func(map[string]any) {}, ""},
		{"shard removed, edges lowered", func(doc map[string]any) {
			shards := doc["shards"].([]any)
			last := shards[len(shards)-1].(map[string]any)
			doc["shards"] = shards[:len(shards)-1]
			gr := doc["graph"].(map[string]any)
			edges, _ := gr["edges"].(json.Number).Int64()
			lost, _ := last["edges"].(json.Number).Int64()
			gr["edges"] = edges - lost
		}, "edited or corrupted"},
		{"source renamed", func(doc map[string]any) { doc["graph"].(map[string]any)["source"] = "other" }, "edited or corrupted"},
		{"checksum removed", func(doc map[string]any) { delete(doc, "checksum") }, "no checksum"},
		{"checksum not sha256", func(doc map[string]any) { doc["checksum"] = "md5:00" }, "not sha256:"},
		{"format 1", func(doc map[string]any) { doc["format"] = 1; delete(doc, "checksum") }, "re-partition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewMemStore()
			writePartition(t, s, g, 3, 0x1234)
			rewriteManifest(t, s, tc.edit)
			m, err := ReadManifest(ctx, s)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.VerifyChecksum() != nil || m.Validate() != nil {
					t.Fatal("manifest read back does not verify")
				}
				return
			}
			if err == nil {
				t.Fatalf("tampered manifest opened: %d shards, %d edges", len(m.Shards), m.Graph.Edges)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ManifestName) {
				t.Fatalf("error %q does not say %q and name %s", err, tc.want, ManifestName)
			}
			if tc.name != "format 1" && !errors.Is(err, ErrManifestChecksum) {
				t.Fatalf("error %v does not wrap ErrManifestChecksum", err)
			}
		})
	}
}

// TestManifestSealCoversEveryEntry changes each shard entry's fields one
// at a time after sealing: every change must fail verification.
func TestManifestSealCoversEveryEntry(t *testing.T) {
	m := validManifest()
	if err := m.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := m.VerifyChecksum(); err != nil {
		t.Fatal(err)
	}
	edits := []func(m *Manifest){
		func(m *Manifest) { m.Shards[0].XXHash64++ },
		func(m *Manifest) { m.Shards[1].Edges++ },
		func(m *Manifest) { m.Shards[1].File = "x.tgs" },
		func(m *Manifest) { m.Shards[0].Bytes++ },
		func(m *Manifest) { m.PartitionID++ },
		func(m *Manifest) { m.Graph.Wedges++ },
		func(m *Manifest) { m.Shards = m.Shards[:1] },
	}
	for k, edit := range edits {
		c := *m
		c.Shards = append([]ShardInfo(nil), m.Shards...)
		edit(&c)
		if err := c.VerifyChecksum(); !errors.Is(err, ErrManifestChecksum) {
			t.Errorf("edit %d verified: %v", k, err)
		}
	}
}
