package workerclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
	"github.com/trigrid/trigrid/storage"
)

// OpenStore opens the store an assignment names: directly when this
// machine can read it (its manifest is there), otherwise through the
// coordinator's FetchShard for the job the store belongs to.
func (c *Conn) OpenStore(ctx context.Context, url string) (storage.Store, error) {
	var err error
	if c.cfg.FetchShards {
		err = errors.New("configured to fetch shards from the coordinator")
	} else {
		var st storage.Store
		if st, err = storage.Open(url); err == nil {
			if _, err = st.Stat(ctx, storage.ManifestName); err == nil {
				return st, nil
			}
		}
	}
	c.mu.Lock()
	job, ok := c.stores[url]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("workerclient: store %s: %w (and no job to fetch it for)", url, err)
	}
	c.log.Info("reading the job's shards from the coordinator", "job", job, "store", url, "local_error", err)
	return &fetchStore{c: c, job: job, url: url}, nil
}

// fetchStore reads one job's files from the coordinator. It is read-only.
type fetchStore struct {
	c   *Conn
	job api.JobID
	url string
}

func (s *fetchStore) URL() string { return s.url }

func (s *fetchStore) Put(context.Context, string, []byte) error {
	return fmt.Errorf("workerclient: store of job %s is read-only", s.job)
}

func (s *fetchStore) List(context.Context) ([]string, error) {
	return nil, fmt.Errorf("workerclient: store of job %s cannot be listed", s.job)
}

func (s *fetchStore) Stat(ctx context.Context, name string) (int64, error) {
	b, err := s.Get(ctx, name)
	return int64(len(b)), err
}

// Get fetches one file in chunks, each checked against the size the first
// chunk announced, and the whole against its xxhash64. Memory grows with
// the bytes that arrive, never with an announced size.
func (s *fetchStore) Get(ctx context.Context, name string) ([]byte, error) {
	if err := api.CheckFileName("file name", name); err != nil {
		return nil, fmt.Errorf("workerclient: %w", err)
	}
	stream, err := pb.NewClusterClient(s.c.cfg.Client).FetchShard(ctx, &pb.FetchShardRequest{Job: string(s.job), Name: name},
		grpc.MaxCallRecvMsgSize(api.MaxChunkMessage))
	if err != nil {
		return nil, fmt.Errorf("workerclient: fetch %s of job %s: %w", name, s.job, err)
	}
	var data []byte
	var size int64
	var hash uint64
	for first := true; ; first = false {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if first {
				return nil, fmt.Errorf("workerclient: fetch %s of job %s: empty stream", name, s.job)
			}
			break
		}
		if err != nil {
			if status.Code(err) == codes.NotFound {
				return nil, fmt.Errorf("workerclient: fetch %s of job %s: %s: %w", name, s.job, status.Convert(err).Message(), os.ErrNotExist)
			}
			return nil, fmt.Errorf("workerclient: fetch %s of job %s: %w", name, s.job, err)
		}
		if err := pb.CheckChunk(ch, first, int64(len(data)), size); err != nil {
			return nil, fmt.Errorf("workerclient: fetch %s of job %s: %w", name, s.job, err)
		}
		if first {
			size, hash = ch.GetSize(), ch.GetXxhash64()
		}
		data = append(data, ch.GetData()...)
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("workerclient: fetch %s of job %s: %d of %d bytes arrived", name, s.job, len(data), size)
	}
	if got := xxhash.Sum64(data); got != hash {
		return nil, fmt.Errorf("workerclient: fetch %s of job %s: xxhash64 %016x, the coordinator announced %016x", name, s.job, got, hash)
	}
	return data, nil
}

var _ storage.Store = (*fetchStore)(nil)
