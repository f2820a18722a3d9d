package clustertest

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testcerts"
)

// A coordinator with mutual TLS, a join token and a gossip key refuses a
// worker without the token, one without a client certificate and one with
// the wrong gossip key; a worker with all three counts.
func TestSecurityRefusals(t *testing.T) {
	t.Parallel()
	certs, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	other := base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	serverTLS := []string{"--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey, "--tls-ca", certs.CA}
	clientTLS := []string{"--tls-cert", certs.ClientCert, "--tls-key", certs.ClientKey, "--tls-ca", certs.CA}
	c := startCoordinator(t, append(serverTLS, "--token", "secret-token", "--gossip-key", key)...)

	noToken := startWorker(t, c, "notoken", append(clientTLS, "--gossip-key", key)...)
	noCert := startWorker(t, c, "nocert", "--tls-ca", certs.CA, "--token", "secret-token", "--gossip-key", key)
	wrongKey := startWorker(t, c, "wrongkey", append(clientTLS, "--token", "secret-token", "--gossip-key", other)...)

	// The refusals, as the refused workers and the coordinator see them:
	// each refused worker exits with the reason.
	for _, w := range []*proc{noToken, wrongKey, noCert} {
		if err := w.wait(30 * time.Second); err == nil {
			t.Errorf("%s exited 0", w.name)
		}
	}
	if !strings.Contains(noToken.out.String(), "join token") {
		t.Errorf("notoken does not say why it was refused")
	}
	if !strings.Contains(wrongKey.out.String(), "decrypt") {
		t.Errorf("wrongkey does not say why it was refused")
	}
	if !strings.Contains(noCert.out.String(), "requires a client certificate") {
		t.Errorf("nocert does not say why it was refused")
	}
	// The coordinator logs the refusals, and none of them is a member of
	// the job's workers.
	waitFor(t, 10*time.Second, "the coordinator's refusal logs", func() bool {
		out := c.out.String()
		return strings.Contains(out, "refused a call") && strings.Contains(out, "no join token") &&
			strings.Contains(out, "refused a connection")
	})

	good := startWorker(t, c, "good", append(clientTLS, "--token", "secret-token", "--gossip-key", key)...)
	client := append(append([]string{}, clientTLS...), "--token", "secret-token", "--partitions", "2", grqc(t))
	r, stderr, err := submitWait(t, c, 2*time.Minute, client...)
	checkDone(t, r, err, stderr, grqcTriangles)
	if r.Workers != 1 {
		t.Errorf("%d workers counted; only %s was let in", r.Workers, good.name)
	}
	// A client without the token is refused too.
	_, stderr, err = cli(t, 30*time.Second, append([]string{"status", "--coordinator", c.grpc}, clientTLS...)...)
	if err == nil || !strings.Contains(stderr, "join token") {
		t.Errorf("status without the token: %v\n%s", err, stderr)
	}
}
