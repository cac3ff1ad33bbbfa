package browser

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/pltlab/pltlab/pages"
)

// ManifestPath is where `pltlab serve` serves the page's manifest.
const ManifestPath = "/manifest.json"

// contactTimeout bounds PinFromServer and FetchManifest.
const contactTimeout = 10 * time.Second

// SPKIPin returns the pin Chromium's --ignore-certificate-errors-spki-list takes for cert:
// base64 (standard, padded) of the SHA-256 of its SubjectPublicKeyInfo.
func SPKIPin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// PinFromServer connects to addr ("ip:port", TCP) with TLS for serverName, without verifying
// the certificate (trust on first use), and returns the SPKI pin of the leaf certificate it
// presents.
func PinFromServer(ctx context.Context, addr, serverName string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, contactTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{ServerName: serverName, InsecureSkipVerify: true, //nolint:gosec // TOFU: we only read the certificate
		NextProtos: []string{"h2", "http/1.1"}}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("read the server certificate at %s: %w", addr, err)
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return "", fmt.Errorf("read the server certificate at %s: none presented", addr)
	}
	return SPKIPin(certs[0]), nil
}

// FetchManifest fetches https://serverName:PORT/manifest.json from addr ("ip:port"), accepting
// only a certificate whose SPKI pin is pin, and decodes it.
func FetchManifest(ctx context.Context, addr, serverName, pin string) (*pages.Manifest, error) {
	ctx, cancel := context.WithTimeout(ctx, contactTimeout)
	defer cancel()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("fetch manifest: bad address %q: %w", addr, err)
	}
	u := "https://" + net.JoinHostPort(serverName, port) + ManifestPath
	client := &http.Client{Transport: pinnedTransport(addr, serverName, pin)}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch manifest: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch manifest %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch manifest %s: HTTP status %d", u, resp.StatusCode)
	}
	var m pages.Manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("fetch manifest %s: %w", u, err)
	}
	m.Index = cmp.Or(m.Index, pages.IndexPath)
	return &m, nil
}

// pinnedTransport dials addr whatever the URL's host, and accepts only the pinned certificate.
func pinnedTransport(addr, serverName, pin string) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{ServerName: serverName, InsecureSkipVerify: true, //nolint:gosec // checked by the pin below
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) == 0 {
					return errors.New("no certificate")
				}
				leaf, err := x509.ParseCertificate(raw[0])
				if err != nil {
					return err
				}
				if got := SPKIPin(leaf); got != pin {
					return fmt.Errorf("certificate SPKI pin %s, want %s", got, pin)
				}
				return nil
			}},
		ForceAttemptHTTP2: true,
	}
}
