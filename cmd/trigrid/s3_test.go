package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/trigrid/trigrid/internal/tests3"
)

// partition -o s3://..., then count --shards s3://... against a real S3
// server (tests3: SeaweedFS on 127.0.0.1; a long test): the count is
// exact, a non-empty prefix and --force are refused, and a corrupted
// object is an error naming its s3:// URL.
func TestPartitionAndCountOnS3(t *testing.T) {
	srv := tests3.Start(t, "trigrid-cli")
	srv.Env(t)
	graph := filepath.Join("..", "..", "testdata", "ca-GrQc.txt.gz")
	url := "s3://trigrid-cli/ca-grqc/p3"
	if _, stderr, err := run(t, "partition", "-P", "3", "--progress", "none", "-o", url, graph); err != nil {
		t.Fatalf("partition -o %s: %v\n%s", url, err, stderr)
	}
	if rep := countJSON(t, "--shards", url); rep.Triangles != 48260 {
		t.Fatalf("count --shards %s: %d triangles, want 48260", url, rep.Triangles)
	}

	_, _, err := run(t, "partition", "-P", "3", "--progress", "none", "-o", url, graph)
	if err == nil || !strings.Contains(err.Error(), "choose an empty prefix") {
		t.Fatalf("partition into a non-empty prefix: %v", err)
	}
	_, _, err = run(t, "partition", "-P", "3", "--force", "--progress", "none", "-o", url, graph)
	if err == nil || !strings.Contains(err.Error(), "--force cannot replace a partitioning in an object store") {
		t.Fatalf("partition --force onto s3: %v", err)
	}
	_, _, err = run(t, "partition", "-P", "3", "--progress", "none", "-o", "s3://no-such-bucket/x", graph)
	if err == nil || !strings.Contains(err.Error(), "bucket no-such-bucket does not exist") {
		t.Fatalf("partition into a missing bucket: %v", err)
	}

	// Flip one byte of a shard in place on the server.
	c := srv.Client()
	ctx := t.Context()
	key := "ca-grqc/p3/shard-0000-0001.tgs"
	obj, err := c.GetObject(ctx, "trigrid-cli", key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(obj); err != nil {
		t.Fatal(err)
	}
	obj.Close()
	data := buf.Bytes()
	data[len(data)/2] ^= 0x40
	if _, err := c.PutObject(ctx, "trigrid-cli", key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := run(t, "count", "--json", "--progress", "none", "--device", "cpu", "--shards", url)
	if err == nil || !strings.Contains(err.Error()+stderr, "s3://trigrid-cli/"+key) {
		t.Fatalf("count of a corrupted store: %v\n%s", err, stderr)
	}
}
