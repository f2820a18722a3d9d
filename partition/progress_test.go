package partition

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trigrid/trigrid/graph/edgeio"
	"github.com/trigrid/trigrid/storage"
)

// TestPartitionReportsEveryStage: the partitioner reports its read (in
// bytes, the input's size known) and every later stage, on both paths.
func TestPartitionReportsEveryStage(t *testing.T) {
	const edges = "# c\n1 2\n2 1\n2 3\n3 1\n5 5\n1 2\n3 4\n4 1\n"
	g := filepath.Join(t.TempDir(), "g.txt")
	if err := os.WriteFile(g, []byte(edges), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		limit int64
		want  []string
	}{
		{0, []string{"read", "clean", "orient", "split", "write"}},
		{1 << 30, []string{"read", "dedupe", "rank", "route", "write"}},
	} {
		var mu sync.Mutex
		var stages []string
		var readTotal int64
		cfg := Config{Scheme: storage.SchemeHash, P: 2, MemLimit: tc.limit, TempDir: t.TempDir(),
			Progress: func(stage string, done, total int64) {
				mu.Lock()
				defer mu.Unlock()
				if len(stages) == 0 || stages[len(stages)-1] != stage {
					stages = append(stages, stage)
				}
				if stage == "read" {
					readTotal = total
				}
			}}
		if _, err := PartitionFile(t.Context(), g, edgeio.ReadOptions{}, storage.NewMemStore(), cfg); err != nil {
			t.Fatal(err)
		}
		if strings.Join(stages, ",") != strings.Join(tc.want, ",") {
			t.Errorf("mem limit %d: stages %v, want %v", tc.limit, stages, tc.want)
		}
		if readTotal != int64(len(edges)) {
			t.Errorf("mem limit %d: read total %d, want the file's %d bytes", tc.limit, readTotal, len(edges))
		}
	}
}
