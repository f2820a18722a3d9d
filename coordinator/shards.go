package coordinator

import (
	"github.com/cespare/xxhash/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/storage"
)

// servedJob is what FetchShard may serve of one job: the files its
// manifest names, with their sizes and hashes.
type servedJob struct {
	store storage.Store
	files map[string]servedFile
}

type servedFile struct {
	size int64
	hash uint64
	// known says size and hash come from the manifest (shards, id map);
	// the manifest itself is hashed as read.
	known bool
}

// serve makes a job's files available to FetchShard.
func (s *Server) serve(id api.JobID, store storage.Store, m *storage.Manifest) {
	files := map[string]servedFile{storage.ManifestName: {}}
	for _, sh := range m.Shards {
		files[sh.File] = servedFile{size: sh.Bytes, hash: sh.XXHash64, known: true}
	}
	if m.IDMap != nil {
		files[m.IDMap.File] = servedFile{size: m.IDMap.Bytes, hash: m.IDMap.XXHash64, known: true}
	}
	s.mu.Lock()
	s.served[id] = &servedJob{store: store, files: files}
	s.mu.Unlock()
}

// FetchShard streams one file of a job's store: only files the job's
// manifest names. A file that no longer matches its manifest entry is a
// DataLoss error naming it, so that no worker counts a rotten shard.
func (s *Server) FetchShard(req *pb.FetchShardRequest, stream pb.Cluster_FetchShardServer) error {
	job, name, err := pb.DecodeFetchShard(req)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "coordinator: %v", err)
	}
	s.mu.Lock()
	sj := s.served[job]
	s.mu.Unlock()
	if sj == nil {
		return status.Errorf(codes.NotFound, "coordinator: job %s has no shards here", job)
	}
	f, ok := sj.files[name]
	if !ok {
		return status.Errorf(codes.NotFound, "coordinator: job %s: %q is not a file of its manifest", job, name)
	}
	ctx := stream.Context()
	select {
	case s.fetches <- struct{}{}:
		defer func() { <-s.fetches }()
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	data, err := sj.store.Get(ctx, name)
	if err != nil {
		return status.Errorf(codes.Unavailable, "coordinator: job %s: shard %s: %v", job, name, err)
	}
	sum := xxhash.Sum64(data)
	if f.known && (int64(len(data)) != f.size || sum != f.hash) {
		s.log.Error("shard does not match its manifest", "job", job, "shard", name, "bytes", len(data), "want_bytes", f.size)
		return status.Errorf(codes.DataLoss, "coordinator: job %s: shard %s in %s is damaged: %d bytes with xxhash64 %016x, the manifest says %d bytes with %016x",
			job, name, sj.store.URL(), len(data), sum, f.size, f.hash)
	}
	chunk := s.cfg.ChunkSize
	for off := 0; off == 0 || off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		m := &pb.ShardChunk{Offset: int64(off), Data: data[off:end]}
		if off == 0 {
			m.Size, m.Xxhash64 = int64(len(data)), sum
		}
		if err := stream.Send(m); err != nil {
			return err
		}
		s.met.bytesServed.Add(float64(end - off))
		if len(data) == 0 {
			break
		}
	}
	return nil
}
