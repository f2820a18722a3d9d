package storage

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
)

// memStore keeps files in memory. Put and Get copy, so a caller that
// reuses its buffer cannot change a stored shard: shards stay immutable as
// they are on disk.
type memStore struct {
	url   string
	mu    sync.RWMutex
	files map[string][]byte
}

// NewMemStore returns an empty, unnamed in-memory store.
func NewMemStore() Store { return &memStore{url: "mem://", files: map[string][]byte{}} }

var (
	memStoresMu sync.Mutex
	memStores   = map[string]*memStore{}
)

func namedMemStore(name string) *memStore {
	memStoresMu.Lock()
	defer memStoresMu.Unlock()
	s, ok := memStores[name]
	if !ok {
		s = &memStore{url: "mem://" + name, files: map[string][]byte{}}
		memStores[name] = s
	}
	return s
}

func (s *memStore) URL() string { return s.url }

func (s *memStore) Put(ctx context.Context, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	c := slices.Clone(data)
	if c == nil {
		c = []byte{}
	}
	s.mu.Lock()
	s.files[name] = c
	s.mu.Unlock()
	return nil
}

func (s *memStore) get(name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	data, ok := s.files[name]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("storage: %s: %s: %w", s.url, name, os.ErrNotExist)
	}
	return data, nil
}

func (s *memStore) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := s.get(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(data), nil
}

func (s *memStore) Stat(ctx context.Context, name string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	data, err := s.get(name)
	return int64(len(data)), err
}

func (s *memStore) List(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.files)), nil
}
