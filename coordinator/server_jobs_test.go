package coordinator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/storage"
)

// A job naming a kernel trigrid does not have is refused when it is
// submitted, naming the kernels there are.
func TestServerSubmitRefusesUnknownKernel(t *testing.T) {
	ts := startServer(t)
	jobs := pb.NewJobsClient(dial(t, ts.addr))
	_, err := jobs.Submit(context.Background(), &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Kernel: "nosuch"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("kernel nosuch: %v, want InvalidArgument", err)
	}
	msg := status.Convert(err).Message()
	for _, want := range []string{`"nosuch"`, "merge", "wetric"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not name %s", msg, want)
		}
	}
	for _, k := range []string{"", "auto", "merge", "wetric"} {
		if _, err := jobs.Submit(context.Background(), &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Kernel: k}); err != nil {
			t.Errorf("kernel %q refused: %v", k, err)
		}
	}
}

// writeStore partitions the test graph into dir.
func writeStore(t *testing.T, dir string) {
	t.Helper()
	store, err := storage.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (testPartitioner{}).Partition(context.Background(), PartitionRequest{Graph: testGraph, Scheme: storage.SchemeHash, P: 2, Store: store}); err != nil {
		t.Fatal(err)
	}
}

// Shard stores, like graph files, are read only from the data
// directories, and a refusal reads the same whether what lies outside
// them exists or not.
func TestServerShardStoresStayInDataDirs(t *testing.T) {
	data, outside := t.TempDir(), t.TempDir()
	in, out := filepath.Join(data, "shards"), filepath.Join(outside, "shards")
	writeStore(t, in)
	writeStore(t, out)
	if err := os.Symlink(out, filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nope"), filepath.Join(data, "dangling")); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *Config) { c.DataDirs = []string{data} })
	ctx := context.Background()
	refusal := func(path string) string {
		t.Helper()
		_, err := ts.s.Submit(ctx, api.JobSpec{Shards: path})
		if err == nil {
			t.Errorf("shard store %s accepted", path)
			return ""
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("refusal of %s does not name it: %v", path, err)
		}
		return strings.ReplaceAll(err.Error(), path, "PATH")
	}
	want := refusal(out)
	for _, p := range []string{
		filepath.Join(outside, "nope"), "file://" + out, filepath.Join(data, "..", filepath.Base(outside), "shards"),
		filepath.Join(data, "link"), filepath.Join(data, "dangling"), filepath.Join(data, "missing"), "/etc",
	} {
		if got := refusal(p); got != want {
			t.Errorf("refusal of %s reads %q, of an existing store outside %q", p, got, want)
		}
	}
	for _, p := range []string{in, "file://" + in, filepath.Join(data, ".", "shards")} {
		if _, err := ts.s.Submit(ctx, api.JobSpec{Shards: p}); err != nil {
			t.Errorf("shard store %s refused: %v", p, err)
		}
	}
	ts2 := startServer(t, func(c *Config) { c.DataDirs = nil })
	if _, err := ts2.s.Submit(ctx, api.JobSpec{Shards: in}); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("shard store without data directories: %v", err)
	}
}

// A link inside a data directory that leads outside is refused alike
// whether its target exists or not.
func TestServerGraphRefusalHidesWhatIsOutside(t *testing.T) {
	data, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": secret, "dangling": filepath.Join(outside, "nope.txt")} {
		if err := os.Symlink(target, filepath.Join(data, name)); err != nil {
			t.Fatal(err)
		}
	}
	ts := startServer(t, func(c *Config) { c.DataDirs = []string{data} })
	msgs := map[string]bool{}
	for _, p := range []string{filepath.Join(data, "link"), filepath.Join(data, "dangling"), secret, filepath.Join(outside, "nope.txt"), filepath.Join(data, "missing")} {
		_, err := ts.s.Submit(context.Background(), api.JobSpec{Graph: p, Partitions: 1})
		if err == nil {
			t.Fatalf("graph %s accepted", p)
		}
		if strings.Contains(err.Error(), outside) && !strings.HasPrefix(p, outside) {
			t.Errorf("refusal of %s reveals the link's target: %v", p, err)
		}
		msgs[strings.ReplaceAll(err.Error(), p, "PATH")] = true
	}
	if len(msgs) != 1 {
		t.Errorf("refusals differ: %v", msgs)
	}
}

// recordingPartitioner is testPartitioner that notes how it was asked to
// read.
type recordingPartitioner struct {
	testPartitioner
	mu  sync.Mutex
	got []ReadOptions
}

func (p *recordingPartitioner) Partition(ctx context.Context, req PartitionRequest) (*storage.Manifest, error) {
	p.mu.Lock()
	p.got = append(p.got, req.Read)
	p.mu.Unlock()
	return p.testPartitioner.Partition(ctx, req)
}

// A job's reading options reach the partitioner, which refuses what it
// cannot read when the job is submitted.
func TestServerSubmitCarriesReadOptions(t *testing.T) {
	rp := &recordingPartitioner{}
	ts := startServer(t, func(c *Config) { c.Partitioner = rp })
	jobs := pb.NewJobsClient(dial(t, ts.addr))
	if _, err := jobs.Submit(context.Background(), &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Format: "edgelist", SkipBadLines: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Submit(context.Background(), &pb.SubmitRequest{Graph: testGraph, Partitions: 2, Format: "nosuch"}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "edgelist") {
		t.Errorf("format nosuch: %v, want InvalidArgument naming the formats", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		rp.mu.Lock()
		n := len(rp.got)
		rp.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job was not partitioned")
		}
		time.Sleep(10 * time.Millisecond)
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.got[0] != (ReadOptions{Format: "edgelist", SkipBadLines: true}) {
		t.Errorf("the partitioner was asked to read with %+v", rp.got[0])
	}
}

// A coordinator handed no partitioner takes shard stores only, one handed
// no counts reader takes no per-vertex jobs, and one handed no kernel
// names takes any kernel; each refusal comes when the job is submitted.
func TestServerRefusesWhatItWasNotHanded(t *testing.T) {
	data := t.TempDir()
	shards := filepath.Join(data, "shards")
	writeStore(t, shards)
	ts := startServer(t, func(c *Config) {
		c.Partitioner, c.CountsReader, c.Kernels = nil, nil, KernelNames{}
		c.DataDirs = []string{filepath.Dir(testGraph), data}
	})
	ctx := context.Background()
	for _, c := range []struct {
		spec api.JobSpec
		want string
	}{
		{api.JobSpec{Graph: testGraph, Partitions: 2}, "submit a shard store"},
		{api.JobSpec{Shards: shards, PerVertex: true}, "counts reader"},
		{api.JobSpec{Shards: shards, PerEdge: true}, "counts reader"},
	} {
		if _, err := ts.s.Submit(ctx, c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a refusal saying %q", c.spec, err, c.want)
		}
	}
	for _, k := range []string{"", "merge", "nosuch"} {
		if _, err := ts.s.Submit(ctx, api.JobSpec{Shards: shards, Kernel: k}); err != nil {
			t.Errorf("kernel %q refused with no kernel names given: %v", k, err)
		}
	}
}
