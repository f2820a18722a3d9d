// Package testcerts writes throwaway certificates for tests of mutual TLS
// on loopback: a CA, a server certificate for 127.0.0.1 and localhost, a
// client certificate, and a client certificate from another CA that the
// server must refuse. The keys are generated per call and never reused.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files are the paths Write produced.
type Files struct {
	CA                    string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
	// StrangerCert and StrangerKey are a client certificate signed by a CA
	// the server does not trust.
	StrangerCert, StrangerKey string
}

type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
}

func newCA(name string) (issuer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return issuer{}, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return issuer{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return issuer{}, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return issuer{cert, key}, der, err
}

func (ca issuer) sign(name string, usage x509.ExtKeyUsage) (certDER, keyDER []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	certDER, err = x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err = x509.MarshalECPrivateKey(key)
	return certDER, keyDER, err
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// Write generates the certificates into dir.
func Write(dir string) (Files, error) {
	f := Files{
		CA:           filepath.Join(dir, "ca.pem"),
		ServerCert:   filepath.Join(dir, "server.pem"),
		ServerKey:    filepath.Join(dir, "server-key.pem"),
		ClientCert:   filepath.Join(dir, "client.pem"),
		ClientKey:    filepath.Join(dir, "client-key.pem"),
		StrangerCert: filepath.Join(dir, "stranger.pem"),
		StrangerKey:  filepath.Join(dir, "stranger-key.pem"),
	}
	ca, caDER, err := newCA("trigrid test CA")
	if err != nil {
		return Files{}, err
	}
	other, _, err := newCA("another CA")
	if err != nil {
		return Files{}, err
	}
	if err := writePEM(f.CA, "CERTIFICATE", caDER); err != nil {
		return Files{}, err
	}
	for _, c := range []struct {
		ca        issuer
		name      string
		usage     x509.ExtKeyUsage
		cert, key string
	}{
		{ca, "coordinator", x509.ExtKeyUsageServerAuth, f.ServerCert, f.ServerKey},
		{ca, "worker", x509.ExtKeyUsageClientAuth, f.ClientCert, f.ClientKey},
		{other, "stranger", x509.ExtKeyUsageClientAuth, f.StrangerCert, f.StrangerKey},
	} {
		certDER, keyDER, err := c.ca.sign(c.name, c.usage)
		if err != nil {
			return Files{}, err
		}
		if err := writePEM(c.cert, "CERTIFICATE", certDER); err != nil {
			return Files{}, err
		}
		if err := writePEM(c.key, "EC PRIVATE KEY", keyDER); err != nil {
			return Files{}, err
		}
	}
	return f, nil
}
