package clustertest

import (
	"strings"
	"testing"
	"time"

	"github.com/trigrid/trigrid/internal/testcerts"
)

// Clients whose TLS settings do not fit the coordinator's (none against
// TLS, no certificate, TLS against none) fail saying so: submit and status
// exit with the cause, a worker exits with it instead of retrying.
func TestClientsSayWhyTLSFails(t *testing.T) {
	t.Parallel()
	certs, err := testcerts.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	serverTLS := []string{"--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey, "--tls-ca", certs.CA}
	clientTLS := []string{"--tls-cert", certs.ClientCert, "--tls-key", certs.ClientKey, "--tls-ca", certs.CA}
	secure := startCoordinator(t, serverTLS...)
	plain := startCoordinator(t)

	cases := []struct {
		name  string
		c     *coord
		flags []string
		want  string
	}{
		{"no TLS", secure, nil, "the coordinator requires TLS: give --tls-ca"},
		{"no certificate", secure, []string{"--tls-ca", certs.CA}, "the coordinator requires a client certificate"},
		{"TLS against none", plain, clientTLS, "the coordinator does not speak TLS"},
	}
	for _, tc := range cases {
		for _, args := range [][]string{
			append([]string{"status", "--coordinator", tc.c.grpc}, tc.flags...),
			append(append([]string{"submit", "--coordinator", tc.c.grpc, "--partitions", "2"}, tc.flags...), grqc(t)),
		} {
			_, stderr, err := cli(t, 30*time.Second, args...)
			if err == nil || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "broken pipe") {
				t.Errorf("%s: %s: %v, want %q\n%s", tc.name, args[0], err, tc.want, stderr)
			}
		}
		w := start(t, "worker "+tc.name, append([]string{"worker", "--coordinator", tc.c.grpc, "--gossip", "127.0.0.1:0",
			"--name", "w", "--device", "cpu", "--log-format", "json"}, tc.flags...)...)
		if err := w.wait(20 * time.Second); err == nil || strings.Contains(err.Error(), "still running") {
			t.Errorf("%s: worker: %v, want it to exit with the cause", tc.name, err)
		} else if !strings.Contains(w.out.String(), tc.want) {
			t.Errorf("%s: the worker does not say %q:\n%s", tc.name, tc.want, w.out.String())
		}
	}
}
