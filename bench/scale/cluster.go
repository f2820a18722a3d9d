package scale

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/trigrid/trigrid/api"
	"github.com/trigrid/trigrid/api/pb"
)

// cluster is one run's coordinator and workers, started as separate
// processes of the bench's binary on loopback: the same gRPC, gossip and
// shard path as a cluster of machines.
type cluster struct {
	cfg     *Config
	coord   *child
	workers []*child
	grpc    string
	gossip  string
	conn    *grpc.ClientConn
	jobs    pb.JobsClient
}

// startCluster starts a coordinator with its state under dir and n
// workers, and returns once every worker is connected. On an error
// every process started is gone again.
func startCluster(ctx context.Context, cfg *Config, n int, dir, store string) (_ *cluster, err error) {
	cl := &cluster{cfg: cfg}
	defer func() {
		if err != nil {
			cl.kill()
		}
	}()
	args := []string{"coordinator", "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0",
		"--log-format", "json", "--gossip-timing", "local", "--name", "bench-coordinator", "--state", filepath.Join(dir, "state")}
	if d, ok := localDir(store); ok {
		// A coordinator reads only the file stores strictly inside the
		// data directories it is given.
		args = append(args, "--data-dir", filepath.Dir(filepath.Clean(d)))
	}
	args = append(args, cfg.CoordinatorArgs...)
	if cl.coord, err = startChild("the coordinator", cfg.Exe, args, childEnv(0)); err != nil {
		return nil, err
	}
	ready, err := cl.coord.waitLine(ctx, "coordinator ready", cfg.StartTimeout)
	if err != nil {
		return nil, err
	}
	cl.grpc, _ = ready["grpc"].(string)
	cl.gossip, _ = ready["gossip"].(string)
	if cl.grpc == "" || cl.gossip == "" {
		return nil, cl.coord.failure(fmt.Sprintf("logged a ready line without its addresses (%v)", ready))
	}
	cl.conn, err = grpc.NewClient(cl.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(api.MaxMessage)))
	if err != nil {
		return nil, fmt.Errorf("bench scale: dialling the coordinator at %s: %w", cl.grpc, err)
	}
	cl.jobs = pb.NewJobsClient(cl.conn)
	for w := range n {
		name := fmt.Sprintf("bench-w%d", w+1)
		c, err := startChild("worker "+name, cfg.Exe, cl.workerArgs(name, w), childEnv(cfg.workerCores()))
		if err != nil {
			return nil, err
		}
		cl.workers = append(cl.workers, c)
	}
	if err := cl.awaitWorkers(ctx, n); err != nil {
		return nil, err
	}
	return cl, nil
}

// workerArgs are the flags of worker number w (from 0): a GPU of
// cfg.Devices in turn, or the CPU with CoresPerWorker cores.
func (cl *cluster) workerArgs(name string, w int) []string {
	cfg := cl.cfg
	args := []string{"worker", "--join", cl.gossip, "--coordinator", cl.grpc, "--gossip", "127.0.0.1:0", "--name", name,
		"--log-format", "json", "--gossip-timing", "local", "--cache", strconv.FormatInt(cfg.CacheBytes, 10)}
	if len(cfg.Devices) > 0 {
		args = append(args, "--device", "gpu", "--devices", strconv.Itoa(cfg.Devices[w%len(cfg.Devices)]))
	} else {
		args = append(args, "--device", "cpu", "--cores", strconv.Itoa(cfg.CoresPerWorker))
	}
	if cfg.Prefetch > 0 {
		args = append(args, "--prefetch", strconv.Itoa(cfg.Prefetch))
	}
	return append(args, cfg.WorkerArgs...)
}

// awaitWorkers asks the coordinator for its workers until n are
// connected; a process that exits first is an error naming it.
func (cl *cluster) awaitWorkers(ctx context.Context, n int) error {
	deadline := time.Now().Add(cl.cfg.StartTimeout)
	have := 0
	for {
		for _, c := range append([]*child{cl.coord}, cl.workers...) {
			if c.exited() {
				return c.failure("ended while the cluster was starting")
			}
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := cl.jobs.ListWorkers(rctx, &pb.ListWorkersRequest{})
		cancel()
		if err == nil {
			ws, err := pb.DecodeWorkers(resp)
			if err != nil {
				return fmt.Errorf("bench scale: the coordinator's workers: %w", err)
			}
			have = 0
			for _, w := range ws {
				if w.State != api.WorkerLost {
					have++
				}
			}
			if have >= n {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return cl.coord.failure(fmt.Sprintf("had %d of %d workers connected after %v", have, n, cl.cfg.StartTimeout))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends the workers, then the coordinator, each within grace of a
// SIGTERM; the first that stopped badly is the error.
func (cl *cluster) stop(grace time.Duration) error {
	errs := make([]error, len(cl.workers))
	done := make(chan struct{})
	for i, w := range cl.workers {
		go func() {
			errs[i] = w.stop(grace)
			done <- struct{}{}
		}()
	}
	for range cl.workers {
		<-done
	}
	cl.closeConn()
	if cl.coord != nil {
		errs = append(errs, cl.coord.stop(grace))
	}
	return errors.Join(errs...)
}

func (cl *cluster) closeConn() {
	if cl.conn != nil {
		cl.conn.Close()
		cl.conn = nil
	}
}

// kill ends every process at once (an error or an interrupt).
func (cl *cluster) kill() {
	cl.closeConn()
	for _, w := range cl.workers {
		w.kill()
	}
	if cl.coord != nil {
		cl.coord.kill()
	}
}

// localDir is the directory of a file store's URL (a plain path or
// file://); false for other stores.
func localDir(store string) (string, bool) {
	scheme, rest, ok := strings.Cut(store, "://")
	switch {
	case !ok:
		return store, true
	case strings.EqualFold(scheme, "file"):
		p, err := url.PathUnescape(rest)
		return p, err == nil && p != ""
	}
	return "", false
}
