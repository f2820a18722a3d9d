package partition

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// A limit below the least the external partitioner works in is refused
// before anything is written, with a *MemLimitError naming that least, P
// and the workers; at that least the run partitions the input (or names
// the larger least of its graph, which then does), and its shards are
// those of a run with room to spare.
func TestExternalLeastLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.bin")
	if err := edgeio.WriteFile(path, rmatEdges(12, 8, 3), edgeio.WriteOptions{Format: edgeio.FormatBin}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Scheme: storage.SchemeHash, P: 4, Workers: 2, TempDir: t.TempDir(), PartitionID: 7}
	run := func(limit int64) (storage.Store, error) {
		st := storage.NewMemStore()
		c := cfg
		c.MemLimit = limit
		_, err := PartitionFile(context.Background(), path, edgeio.ReadOptions{}, st, c)
		return st, err
	}
	_, err := run(4 << 20)
	var me *MemLimitError
	if !errors.As(err, &me) || me.Input != "" || me.P != 4 || me.Workers != 2 || me.Least <= 4<<20 || me.Least%(1<<20) != 0 {
		t.Fatalf("a 4 MiB limit: %v", err)
	}
	if !strings.Contains(err.Error(), "is below the least the partitioner works in") {
		t.Errorf("message %q", err)
	}
	limit := me.Least
	for round := 0; ; round++ {
		_, err = run(limit)
		if !errors.As(err, &me) {
			break
		}
		if me.Input == "" || me.Least <= limit || round == 3 {
			t.Fatalf("at the least stated, %d: %v", limit, err)
		}
		limit = me.Least
	}
	if err != nil {
		t.Fatalf("at the least stated, %d: %v", limit, err)
	}
	small, _ := run(limit)
	roomy, err := run(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := roomy.List(context.Background())
	for _, n := range names {
		a, _ := small.Get(context.Background(), n)
		b, _ := roomy.Get(context.Background(), n)
		if n != "manifest.json" && string(a) != string(b) {
			t.Errorf("%s differs between limits %d and 1 GiB", n, limit)
		}
	}
}

// The least limit grows with the cores (the shard encoders), with P (the
// blocks' index and metadata) and with a text input (its chunks in
// flight); a plan at the least holds pass 1 within the room.
func TestExtModelLeast(t *testing.T) {
	bin := readCost{fixed: readFixed + binBatch*24}
	text := readCost{fixed: readFixed, perWorker: textCost(-1)}
	base := extModel{p: 4, workers: 2, cores: 2, read: bin, est: 1 << 24}
	l := base.least()
	more := func(name string, m extModel) {
		if got := m.least(); got <= l {
			t.Errorf("%s: least %d MiB, not above %d MiB", name, got>>20, l>>20)
		}
	}
	m := base
	m.cores = 16
	more("16 cores", m)
	m = base
	m.p = 256
	more("P = 256", m)
	m = base
	m.read = text
	more("text", m)
	pl, ok := base.plan1(l)
	if !ok || pl.readers != 1 || pl.idBudget < minIDBudget {
		t.Fatalf("plan at the least: %+v, %v", pl, ok)
	}
	if _, ok := base.plan1(l - 1<<20); ok {
		t.Errorf("a MiB below the least, %d MiB, plans", l>>20)
	}
	if need := base.read.bytes(pl.readers) + 64*int64(pl.capPairs) + pl.index + pl.idBudget; need > roomOf(l) {
		t.Errorf("pass 1 plans %d bytes in a room of %d", need, roomOf(l))
	}
	// Unknown sizes are planned for the most edges the limit holds.
	m = base
	m.est = -1
	if pl, ok := m.plan1(4 << 30); !ok || pl.est <= 0 || pl.est > 16<<30 {
		t.Errorf("standard input at 4 GiB: %+v, %v", pl, ok)
	}
}

// The reader's cost and the edges are read from the file's first bytes.
func TestInputCost(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "g.bin")
	edges := rmatEdges(10, 8, 1)
	if err := edgeio.WriteFile(bin, edges, edgeio.WriteOptions{Format: edgeio.FormatBin}); err != nil {
		t.Fatal(err)
	}
	rc, est, err := inputCost(bin, edgeio.ReadOptions{})
	if err != nil || est != int64(len(edges)) || rc.perWorker != 0 || rc.fixed > readFixed+int64(len(edges))*32 {
		t.Errorf("binary: %+v, %d edges (want %d), %v", rc, est, len(edges), err)
	}
	txt := filepath.Join(dir, "g.txt.zst")
	if err := edgeio.WriteFile(txt, edges, edgeio.WriteOptions{Format: edgeio.FormatEdgeList}); err != nil {
		t.Fatal(err)
	}
	rc, est, err = inputCost(txt, edgeio.ReadOptions{})
	if err != nil || est <= 0 || rc.perWorker != textCost(-1) || rc.fixed < readFixed+4<<20 {
		t.Errorf("zstd text: %+v, %d edges, %v", rc, est, err)
	}
	if rc, est, _ = inputCost("-", edgeio.ReadOptions{}); est != -1 || rc.perWorker == 0 {
		t.Errorf("standard input: %+v, %d edges", rc, est)
	}
}
