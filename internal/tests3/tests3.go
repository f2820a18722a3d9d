// Package tests3 starts a real S3-compatible server for tests: the S3
// gateway of SeaweedFS (`weed mini`, master, volume server, filer and S3
// in one process), bound to 127.0.0.1 on free ports, with its data in a
// temporary directory and one identity whose keys the test gets.
//
// The server binary is TRIGRID_S3_SERVER when set; else the one built
// earlier into the cache directory (TRIGRID_S3_CACHE, default
// ~/.cache/trigrid/weed); else, when TRIGRID_S3_BUILD=1, it is
// built there from SeaweedFS's Go module at WeedVersion (many minutes on
// two cores, once per machine: later runs reuse it); else the test is
// skipped, saying how to get one. The tests that use it are long tests
// (testlong): the default `go test ./...` starts no server.
package tests3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/trigrid/trigrid/internal/testlong"
)

// WeedModule and WeedVersion pin the server that is built.
const (
	WeedModule  = "github.com/seaweedfs/seaweedfs"
	WeedVersion = "v0.0.0-20261109003541-7506e5f91cd6"
)

// The identity the server accepts.
const (
	AccessKey = "trigridtestaccess"
	SecretKey = "trigridtestsecret0123456789abcdefgh"
)

// Server is a running S3 server.
type Server struct {
	// Endpoint is HOST:PORT of the S3 API, plain HTTP.
	Endpoint string
	bin      string
	args     []string
	log      *os.File
	t        testing.TB

	mu  sync.Mutex
	cmd *exec.Cmd
	run chan struct{} // closed when cmd exits
}

// Binary returns the server binary, building it if that is allowed, or
// skips t.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TRIGRID_S3_SERVER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("TRIGRID_S3_SERVER=%s: %v", p, err)
		}
		return p
	}
	bin := filepath.Join(CacheDir(), "weed-"+WeedVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if os.Getenv("TRIGRID_S3_BUILD") != "1" {
		t.Skipf("no S3 server binary: set TRIGRID_S3_SERVER to a SeaweedFS `weed` binary, or TRIGRID_S3_BUILD=1 to build %s@%s into %s (many minutes, once)", WeedModule, WeedVersion, bin)
	}
	start := time.Now()
	if err := Build(bin); err != nil {
		t.Fatalf("building the S3 server: %v", err)
	}
	t.Logf("built %s in %v", bin, time.Since(start).Round(time.Second))
	return bin
}

// CacheDir is where the server binary is kept between runs.
func CacheDir() string {
	if d := os.Getenv("TRIGRID_S3_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "trigrid", "weed")
	}
	return filepath.Join(os.TempDir(), "trigrid-weed")
}

// Build builds the pinned `weed` into bin: the module's source is fetched
// with `go mod download` and built as its own main module (so its
// replace directives apply) at low priority. A lock file beside bin keeps
// two test processes from building at once; the second waits and reuses.
func Build(bin string) error {
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "build.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return nil // built by another process meanwhile
	}
	goBin := filepath.Join(runtimeGOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	dl := exec.Command(goBin, "mod", "download", "-json", WeedModule+"@"+WeedVersion)
	dl.Dir = dir // outside any module, so no go.mod is consulted or touched
	out, err := dl.Output()
	if err != nil {
		return fmt.Errorf("go mod download %s@%s: %w", WeedModule, WeedVersion, errOutput(err))
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return fmt.Errorf("go mod download %s@%s: %s %v", WeedModule, WeedVersion, info.Error, err)
	}
	src := filepath.Join(dir, "src-"+WeedVersion)
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		os.RemoveAll(src)
		// The module cache is read-only; the build needs a writable copy.
		if out, err := exec.Command("cp", "-r", info.Dir, src).CombinedOutput(); err != nil {
			return fmt.Errorf("copying %s: %v: %s", info.Dir, err, out)
		}
		if out, err := exec.Command("chmod", "-R", "u+w", src).CombinedOutput(); err != nil {
			return fmt.Errorf("chmod %s: %v: %s", src, err, out)
		}
	}
	tmp := bin + ".tmp"
	cmd := exec.Command("nice", "-n", "19", goBin, "build", "-o", tmp, "./weed")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./weed in %s: %v\n%s", src, err, tail(out))
	}
	return os.Rename(tmp, bin)
}

func runtimeGOROOT() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "/usr/local/go"
	}
	return strings.TrimSpace(string(out))
}

func errOutput(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, tail(ee.Stderr))
	}
	return err
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Start starts a server for t, a long test, and stops it at t's end; the
// bucket names in buckets exist when it returns.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	testlong.Skip(t)
	bin := Binary(t)
	dir := t.TempDir()
	ports := freePorts(t, 8)
	cfg := filepath.Join(dir, "s3.json")
	identities := fmt.Sprintf(`{"identities":[{"name":"trigrid","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, AccessKey, SecretKey)
	if err := os.WriteFile(cfg, []byte(identities), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	p := func(i int) string { return strconv.Itoa(ports[i]) }
	s := &Server{
		Endpoint: "127.0.0.1:" + p(0),
		bin:      bin,
		t:        t,
		args: []string{"mini",
			"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
			"-s3.port=" + p(0), "-s3.port.grpc=" + p(1),
			"-master.port=" + p(2), "-master.port.grpc=" + p(3),
			"-volume.port=" + p(4), "-volume.port.grpc=" + p(5),
			"-filer.port=" + p(6), "-filer.port.grpc=" + p(7),
			"-s3.config=" + cfg, "-s3.iam=false",
			"-s3.port.iceberg=0", "-s3.port.lance=0",
			"-webdav=false", "-admin.ui=false",
			"-master.telemetry=false",
			"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
			"-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
		},
	}
	var err error
	if s.log, err = os.Create(filepath.Join(dir, "weed.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		s.log.Close()
		if t.Failed() {
			if b, err := os.ReadFile(s.log.Name()); err == nil {
				t.Logf("S3 server log (last part):\n%s", tail(b))
			}
		}
	})
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	for _, b := range buckets {
		s.MakeBucket(b)
	}
	return s
}

func freePorts(t testing.TB, n int) []int {
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

func (s *Server) start() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %v", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.run = cmd, done
	s.mu.Unlock()
	return s.waitReady(done)
}

// waitReady waits until the S3 API answers an authenticated request.
func (s *Server) waitReady(done chan struct{}) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("the S3 server exited while starting (log %s)", s.log.Name())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = c.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the S3 server at %s did not become ready: %v", s.Endpoint, err)
}

// Client returns a client with the server's identity.
func (s *Server) Client() *minio.Client {
	c, err := s.client()
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func (s *Server) client() (*minio.Client, error) {
	return minio.New(s.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Secure: false,
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
}

// MakeBucket creates bucket, retrying while the server settles.
func (s *Server) MakeBucket(bucket string) {
	s.t.Helper()
	c := s.Client()
	var err error
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = c.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
		if err == nil {
			var ok bool
			ok, err = c.BucketExists(ctx, bucket)
			if err == nil && !ok {
				err = fmt.Errorf("bucket %s not there after creating it", bucket)
			}
		}
		cancel()
		if err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("creating bucket %s: %v", bucket, err)
}

// Env sets, for t, the environment that points storage.Open's s3://
// stores at the server with its identity.
func (s *Server) Env(t testing.TB) {
	t.Setenv("TRIGRID_S3_ENDPOINT", "http://"+s.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
}

// Stop stops the server (SIGTERM, then SIGKILL after 10s) and waits for
// it. The data stays; Restart starts it again on it.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.run
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Restart stops the server, waits down, and starts it again on the same
// ports and data. It may be called from any goroutine.
func (s *Server) Restart(down time.Duration) error {
	s.Stop()
	time.Sleep(down)
	return s.start()
}
