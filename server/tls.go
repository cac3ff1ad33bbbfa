package server

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/pltlab/pltlab/protocol"
	"github.com/quic-go/quic-go/http3"
)

// CertValidity is how long the generated certificate is valid, from one hour before New.
const CertValidity = 30 * 24 * time.Hour

// certificate is the in-process ECDSA P-256 certificate of a Server.
type certificate struct {
	pair   tls.Certificate
	leaf   *x509.Certificate
	keyDER []byte // PKCS #8
	spki   string
}

// newCertificate makes a self-signed ECDSA P-256 server certificate for host (and nothing else).
func newCertificate(hosts []string, now time.Time) (*certificate, error) {
	host := hosts[0]
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ECDSA P-256 key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate certificate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: host, Organization: []string{"pltlab"}},
		DNSNames:              hosts,
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(CertValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create certificate for %s: %w", host, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse generated certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal private key: %w", err)
	}
	return &certificate{
		pair:   tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		leaf:   leaf,
		keyDER: keyDER,
		spki:   SPKIPin(leaf),
	}, nil
}

// SPKIPin returns the base64 (standard encoding) SHA-256 of cert's DER SubjectPublicKeyInfo: the
// form Chromium's --ignore-certificate-errors-spki-list and HPKP (RFC 7469 section 2.4) use.
func SPKIPin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Certificate returns the server's self-signed certificate, for clients that want to verify it
// (add it to a tls.Config's RootCAs) rather than pin its SPKI.
func (s *Server) Certificate() *x509.Certificate { return s.cert.leaf }

// WriteCert writes the certificate and its private key as PEM files cert.pem and key.pem (mode
// 0600) into dir, creating dir if needed, and returns their paths. Nothing is written unless asked.
func (s *Server) WriteCert(dir string) (certFile, keyFile string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create cert dir: %w", err)
	}
	certFile = filepath.Join(dir, "cert.pem")
	keyFile = filepath.Join(dir, "key.pem")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.leaf.Raw})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: s.cert.keyDER})
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return "", "", fmt.Errorf("write certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write private key: %w", err)
	}
	return certFile, keyFile, nil
}

// baseTLSConfig is shared by all listeners: the certificate, TLS 1.2 at least, session tickets on
// (Go's default) so that clients can resume.
func (s *Server) baseTLSConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{s.cert.pair},
		MinVersion:   tls.VersionTLS12,
		KeyLogWriter: s.cfg.keyLog,
	}
}

// tcpTLSConfig is the TLS config of TCP protocol p's listener, whose only ALPN protocol is
// p.ALPN. The TLS version is p.TLSVersion when the table pins one, else capped by
// WithTLSVersion. An HTTP/2 listener refuses handshakes that did not negotiate its ALPN ID (Go
// would otherwise let an http/1.1-only or ALPN-less client in as HTTP/1.1).
func (s *Server) tcpTLSConfig(p protocol.Protocol) *tls.Config {
	c := s.baseTLSConfig()
	c.NextProtos = []string{p.ALPN}
	switch s.tlsVersion(p) {
	case "1.2":
		c.MaxVersion = tls.VersionTLS12
	case "1.3":
		c.MinVersion = tls.VersionTLS13
	}
	if p.Version == protocol.HTTP2 {
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if cs.NegotiatedProtocol != p.ALPN {
				return fmt.Errorf("pltlab: this port serves only ALPN %s", p.ALPN)
			}
			return nil
		}
	}
	return c
}

// tlsVersion is p's TLS version: the table's pin, else the server's WithTLSVersion.
func (s *Server) tlsVersion(p protocol.Protocol) string {
	return cmp.Or(p.TLSVersion, s.cfg.tlsVersion)
}

// quicTLSConfig is the TLS 1.3 config of the QUIC listener, ALPN h3 (RFC 9114 section 3.1).
func (s *Server) quicTLSConfig() *tls.Config {
	c := s.baseTLSConfig()
	c.MinVersion = tls.VersionTLS13
	return http3.ConfigureTLSConfig(c)
}

// tlsVersionName returns "1.0".."1.3" for a TLS version number, "" for 0.
func tlsVersionName(v uint16) string {
	switch v {
	case 0:
		return ""
	case tls.VersionTLS10:
		return "1.0"
	case tls.VersionTLS11:
		return "1.1"
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}
