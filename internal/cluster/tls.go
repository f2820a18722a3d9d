package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSFiles names the PEM files of mutual TLS: this side's certificate and
// key, and the CA that signed the other side's certificates. A server
// needs all three; a client needs the CA, and a certificate and key for
// any server that requires one (trigrid's coordinator does). None set
// means no TLS.
type TLSFiles struct {
	Cert, Key, CA string
}

// Enabled reports whether any file is set.
func (f TLSFiles) Enabled() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

func (f TLSFiles) load() (tls.Certificate, *x509.CertPool, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return tls.Certificate{}, nil, errors.New("cluster: TLS needs all of --tls-cert, --tls-key and --tls-ca")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("cluster: TLS certificate %s with key %s: %w", f.Cert, f.Key, err)
	}
	pool, err := f.caPool()
	return cert, pool, err
}

func (f TLSFiles) caPool() (*x509.CertPool, error) {
	if f.CA == "" {
		return nil, errors.New("cluster: TLS needs --tls-ca")
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("cluster: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("cluster: TLS CA %s holds no PEM certificate", f.CA)
	}
	return pool, nil
}

// ServerTLS returns the coordinator's TLS configuration: its certificate,
// and a client certificate signed by the CA required of every peer.
func ServerTLS(f TLSFiles) (*tls.Config, error) {
	cert, pool, err := f.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// ClientTLS returns a worker's or client's TLS configuration: its own
// certificate, presented to the coordinator, and the CA the coordinator's
// certificate must chain to. serverName is the name the coordinator's
// certificate must carry ("" takes it from the dialled address). A
// coordinator that asks for a client certificate this side has not got,
// or one signed by a CA it does not accept, fails the handshake with an
// error saying so (TLSErrorPrefix).
func ClientTLS(f TLSFiles, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	var own *tls.Certificate
	if f.Cert == "" && f.Key == "" {
		pool, err := f.caPool()
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	} else {
		cert, pool, err := f.load()
		if err != nil {
			return nil, err
		}
		own = &cert
		cfg.Certificates = []tls.Certificate{cert}
		cfg.RootCAs = pool
	}
	cfg.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if own == nil {
			return nil, fmt.Errorf("%sthe coordinator requires a client certificate: give --tls-cert and --tls-key", TLSErrorPrefix)
		}
		if err := cri.SupportsCertificate(own); err != nil {
			return nil, fmt.Errorf("%s--tls-cert %s is not signed by a CA the coordinator accepts (%v)", TLSErrorPrefix, f.Cert, err)
		}
		return own, nil
	}
	return cfg, nil
}
