package test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	k8sintstr "k8s.io/apimachinery/pkg/util/intstr"
)

// wantTriangles is testdata/ca-GrQc.txt.gz's exact count.
const wantTriangles = 48260

// certs writes a CA and one certificate for every pod (server and client
// usages, the Service's DNS name and 127.0.0.1) as the Secret trigrid-tls
// would mount them: tls.crt, tls.key, ca.crt.
func certs(t *testing.T, dir string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "trigrid test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "trigrid-coordinator"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames:    []string{"trigrid-coordinator", "trigrid-coordinator.trigrid.svc"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.crt", "CERTIFICATE", der)
	write("tls.key", "PRIVATE KEY", kb)
	write("ca.crt", "CERTIFICATE", caDER)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pod is one container of the rendered manifests made a local process.
type pod struct {
	name  string
	ports map[int32]int // container port -> loopback port
	paths map[string]string
	env   map[string]string
	args  []string
	log   *bytes.Buffer
	cmd   *exec.Cmd
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// localize maps a string of the manifests to this machine: the pod's
// mount paths to its temp dirs, 0.0.0.0:PORT and 127.0.0.1:PORT (the pod
// IP) to its loopback ports, SERVICE:PORT to the coordinator's.
func (p *pod) localize(s string, coord *pod, service string) string {
	return p.localizeKeep(s, coord, service, false)
}

// localizeKeep is localize that, with keepBinds, leaves 0.0.0.0:PORT as
// it is (for a run in a network namespace of its own).
func (p *pod) localizeKeep(s string, coord *pod, service string, keepBinds bool) string {
	mounts := make([]string, 0, len(p.paths))
	for m := range p.paths {
		mounts = append(mounts, m)
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		s = strings.ReplaceAll(s, m, p.paths[m])
	}
	re := regexp.MustCompile(`(0\.0\.0\.0|127\.0\.0\.1|` + regexp.QuoteMeta(service) + `):(\d+)`)
	return re.ReplaceAllStringFunc(s, func(hp string) string {
		m := re.FindStringSubmatch(hp)
		if keepBinds && m[1] == "0.0.0.0" {
			return hp
		}
		n, _ := strconv.Atoi(m[2])
		owner := p
		if m[1] == service {
			owner = coord
		}
		local, ok := owner.ports[int32(n)]
		if !ok {
			panic(fmt.Sprintf("%s: %s names port %d, which %s does not declare", p.name, s, n, owner.name))
		}
		return "127.0.0.1:" + strconv.Itoa(local)
	})
}

// newPod turns container c of pod template spec into a process: env
// from the manifests (fieldRefs as a pod on this machine would see them,
// secretKeyRefs from secret.example.yaml), mounts as temp dirs filled
// from the ConfigMap and the test's certificates, $(VAR) expanded in the
// args as the kubelet does, then localized.
func newPod(t *testing.T, name string, spec corev1.PodSpec, o objects, secrets map[string]map[string]string, tlsDir, dataDir string) *pod {
	t.Helper()
	c := spec.Containers[0]
	p := &pod{name: name, ports: map[int32]int{}, paths: map[string]string{}, env: map[string]string{}, log: &bytes.Buffer{}}
	for _, cp := range c.Ports {
		if _, ok := p.ports[cp.ContainerPort]; !ok {
			p.ports[cp.ContainerPort] = freePort(t)
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		switch {
		case ok && v.ConfigMap != nil:
			dir := filepath.Join(t.TempDir(), m.Name)
			os.MkdirAll(dir, 0o755)
			for k, data := range o.configMaps[v.ConfigMap.Name].Data {
				os.WriteFile(filepath.Join(dir, k), []byte(data), 0o644)
			}
			p.paths[m.MountPath] = dir
		case ok && v.Secret != nil && v.Secret.SecretName == "trigrid-tls":
			for k := range secrets["trigrid-tls"] {
				if _, err := os.Stat(filepath.Join(tlsDir, k)); err != nil {
					t.Fatalf("%s: the test makes no %s of Secret trigrid-tls", name, k)
				}
			}
			p.paths[m.MountPath] = tlsDir
		case ok && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "trigrid-data":
			p.paths[m.MountPath] = dataDir // shared, as ReadWriteMany
		case !ok || v.EmptyDir != nil || v.PersistentVolumeClaim != nil:
			p.paths[m.MountPath] = t.TempDir() // the pod's own claim
		default:
			t.Fatalf("%s: mount %s: a volume kind the test does not map", name, m.Name)
		}
	}
	for _, e := range c.Env {
		val := e.Value
		if e.ValueFrom != nil {
			switch {
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
				val = "127.0.0.1"
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				val = name
			case e.ValueFrom.SecretKeyRef != nil:
				var ok bool
				if val, ok = secrets[e.ValueFrom.SecretKeyRef.Name][e.ValueFrom.SecretKeyRef.Key]; !ok {
					t.Fatalf("%s: %s: no such key in secret.example.yaml", name, e.Name)
				}
			default:
				t.Fatalf("%s: %s: a valueFrom the test does not map", name, e.Name)
			}
		}
		p.env[e.Name] = val
	}
	expand := func(s string) string {
		return varRef.ReplaceAllStringFunc(s, func(r string) string {
			if v, ok := p.env[r[2:len(r)-1]]; ok {
				return v
			}
			return r
		})
	}
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		p.args = append(p.args, expand(a))
	}
	return p
}

func (p *pod) start(t *testing.T, bin string, coord *pod, service string) {
	t.Helper()
	p.cmd = p.command(t, bin, coord, service, false)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", p.name, p.log)
		}
	})
}

// preflight runs the command line with its 0.0.0.0 binds as the
// manifests give them, in a user and network namespace of its own
// (unshare -rn: nothing but its own loopback is reachable), for a few
// seconds: a process that refuses its binds (say, plain HTTP beyond
// loopback without --insecure) exits there, which the loopback run,
// whose binds are 127.0.0.1, would not show.
func (p *pod) preflight(t *testing.T, bin string, coord *pod, service string) {
	t.Helper()
	if err := exec.Command("unshare", "-rn", "true").Run(); err != nil {
		t.Logf("%s: no preflight of the 0.0.0.0 binds: unshare -rn: %v", p.name, err)
		return
	}
	cmd := p.command(t, bin, coord, service, true)
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Args = append([]string{"unshare", "-rn"}, cmd.Args...)
	cmd.Path, _ = exec.LookPath("unshare")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("%s: with the manifests' binds it exits at once (%v):\n%s", p.name, err, log)
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// command is the process of the pod's command line, localized.
func (p *pod) command(t *testing.T, bin string, coord *pod, service string, keepBinds bool) *exec.Cmd {
	t.Helper()
	args := make([]string, len(p.args))
	for i, a := range p.args {
		args[i] = p.localizeKeep(a, coord, service, keepBinds)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range p.env {
		env = append(env, k+"="+p.localize(v, coord, service))
	}
	// The config file names mount paths too: localize its copy.
	if cfg, ok := flagValue(args, "config"); ok {
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatalf("%s: --config: %v", p.name, err)
		}
		os.WriteFile(cfg, []byte(p.localize(string(b), coord, service)), 0o644)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	t.Logf("%s: trigrid %s", p.name, strings.Join(args, " "))
	return cmd
}

// probe polls an httpGet probe of the manifests until it answers 200.
func (p *pod) probe(t *testing.T, c corev1.Container, pr *corev1.Probe, within time.Duration) {
	t.Helper()
	port, ok := portOf(c, pr.HTTPGet.Port, corev1.ProtocolTCP)
	if !ok {
		t.Fatalf("%s: probe port %s", p.name, pr.HTTPGet.Port.String())
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", p.ports[port], pr.HTTPGet.Path)
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		if p.cmd.ProcessState != nil {
			break
		}
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: probe %s not 200 within %v: %s\n%s", p.name, url, within, last, p.log)
}

// Every container's command line of the cpu overlay, run as it is
// configured (mutual TLS from the Secret, the token and gossip key from
// the example Secret, the ConfigMap as --config) but on loopback: the
// probes pass, the gRPC health service answers over TLS, and the two
// workers count the graph on the shared data volume exactly.
func TestRunRenderedCPU(t *testing.T) {
	bin := trigrid(t)
	o := render(t, filepath.Join(k8sDir, "overlays", "cpu"))
	secrets := exampleSecrets(t)
	tlsDir, dataDir := t.TempDir(), t.TempDir()
	certs(t, tlsDir)
	graph, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "ca-GrQc.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "ca-GrQc.txt.gz"), graph, 0o644); err != nil {
		t.Fatal(err)
	}
	svc := o.services["trigrid-coordinator"]
	sts := o.statefulSets["trigrid-coordinator"]
	dep := o.deployments["trigrid-worker"]
	cc := sts.Spec.Template.Spec.Containers[0]
	coord := newPod(t, "trigrid-coordinator-0", sts.Spec.Template.Spec, o, secrets, tlsDir, dataDir)
	coord.preflight(t, bin, coord, svc.Name)
	coord.start(t, bin, coord, svc.Name)
	coord.probe(t, cc, cc.LivenessProbe, 30*time.Second)
	coord.probe(t, cc, cc.ReadinessProbe, 30*time.Second)
	// TLS is on: --insecure in the manifest opened only the metrics port.
	if !regexp.MustCompile(`"msg":"coordinator ready".*"tls":true`).Match(coord.log.Bytes()) {
		t.Fatalf("the coordinator did not start with TLS:\n%s", coord.log)
	}

	grpcPort, _ := portOf(cc, k8sintstr.FromString("grpc"), corev1.ProtocolTCP)
	grpcAddr := fmt.Sprintf("127.0.0.1:%d", coord.ports[grpcPort])
	healthOverTLS(t, grpcAddr, tlsDir, secrets["trigrid-secrets"]["token"])

	wc := dep.Spec.Template.Spec.Containers[0]
	var workers []*pod
	for i := range int(*dep.Spec.Replicas) {
		w := newPod(t, fmt.Sprintf("trigrid-worker-%d", i), dep.Spec.Template.Spec, o, secrets, tlsDir, dataDir)
		if i == 0 {
			w.preflight(t, bin, coord, svc.Name)
		}
		w.start(t, bin, coord, svc.Name)
		workers = append(workers, w)
	}
	if len(workers) != 2 {
		t.Fatalf("the cpu overlay runs %d workers; the test wants 2", len(workers))
	}
	for _, w := range workers {
		w.probe(t, wc, wc.LivenessProbe, 30*time.Second)
		w.probe(t, wc, wc.ReadinessProbe, 60*time.Second)
	}

	// A client as docs/deployment.md shows it: the graph by its path on
	// the data volume.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sub := exec.CommandContext(ctx, bin, "submit", "--wait", "--json", "-P", "4",
		"--coordinator", grpcAddr, "--tls-server-name", svc.Name,
		"--tls-cert", filepath.Join(tlsDir, "tls.crt"), "--tls-key", filepath.Join(tlsDir, "tls.key"), "--tls-ca", filepath.Join(tlsDir, "ca.crt"),
		filepath.Join(dataDir, "ca-GrQc.txt.gz"))
	sub.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TRIGRID_TOKEN=" + secrets["trigrid-secrets"]["token"]}
	var stderr bytes.Buffer
	sub.Stderr = &stderr
	out, err := sub.Output()
	if err != nil {
		t.Fatalf("trigrid submit: %v\n%s%s", err, out, stderr.Bytes())
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("submit --json: %v: %s", err, out)
	}
	if tri, _ := res["triangles"].(float64); tri != wantTriangles {
		t.Fatalf("triangles %v, want %d: %s", res["triangles"], wantTriangles, out)
	}
	if w, _ := res["workers"].(float64); int(w) != len(workers) {
		t.Fatalf("%v workers counted, want %d: %s", res["workers"], len(workers), out)
	}
	t.Logf("submit: %s", bytes.TrimSpace(out))
}

// healthOverTLS asks the coordinator's grpc.health.v1 service, as a
// health checker with the cluster's certificates and join token (the
// trigrid-token header, which every call needs) would.
func healthOverTLS(t *testing.T, addr, tlsDir, token string) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, "tls.crt"), filepath.Join(tlsDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(filepath.Join(tlsDir, "ca.crt"))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "trigrid-coordinator", MinVersion: tls.VersionTLS12})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "trigrid-token", token)
	for _, svc := range []string{"", "trigrid.v1.Cluster"} {
		r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("grpc health %q: %v %v", svc, r, err)
		}
	}
}
