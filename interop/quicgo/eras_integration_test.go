package quicgo

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIntegrationQuicGoEras builds the endpoint with one release of each API era from the module
// proxy (into the user's cache, so a second run takes seconds; about 70 s from an empty one) and
// makes every client fetch a file from every server over HTTP/3 on loopback: 9 pairs across
// three years of quic-go. Each binary must report the release it was built with, and each pair
// must fetch the file whole (status 200, its size, HTTP/3.0). A version outside the history is
// refused before anything is fetched. The v0.33-v0.36 releases (qtls forks, Go 1.20) build
// too, with a fetched go1.20 toolchain, in about 4 minutes: measured, not run here.
func TestIntegrationQuicGoEras(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	releases := []string{"v0.40.1", "v0.43.0", "v0.66.0"}
	var eps []Endpoint
	for _, v := range releases {
		ep, err := Build(ctx, v, Options{Progress: func(s string) { t.Log(s) }})
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(ep.Binary, "version").Output()
		if err != nil || strings.TrimSpace(string(out)) != v {
			t.Fatalf("%s reports version %q (%v)", ep.Binary, out, err)
		}
		t.Logf("%s: era %s, %s, built in %.1f s (cached %v)", v, ep.Era, ep.Toolchain, ep.BuildS, ep.Cached)
		eps = append(eps, ep)
	}
	dir := t.TempDir()
	cert, key := writeCert(t, dir)
	root := filepath.Join(dir, "www")
	os.Mkdir(root, 0o755)
	body := strings.Repeat("pltlab interop ", 20000) // 300 000 bytes: many packets, flow control
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, srv := range eps {
		addr := startServer(t, ctx, srv, cert, key, root)
		for _, cl := range eps {
			url := fmt.Sprintf("https://%s/f.txt", addr)
			out, err := exec.CommandContext(ctx, cl.Binary, "client", "-url", url, "-ca", cert).CombinedOutput()
			want := fmt.Sprintf("get %s 200 %d HTTP/3.0", url, len(body))
			if err != nil || strings.TrimSpace(string(out)) != want {
				t.Errorf("client %s -> server %s: %v\n%s\nwant %q", cl.Version, srv.Version, err, out, want)
			}
		}
	}
	if _, err := Build(ctx, "v0.99.0", Options{Cache: t.TempDir()}); err == nil || !strings.Contains(err.Error(), `"v0.99.0": accepted`) {
		t.Errorf("v0.99.0: %v", err)
	}
}

// startServer starts ep's server on a loopback port and returns its address once it is ready.
func startServer(t *testing.T, ctx context.Context, ep Endpoint, cert, key, root string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, ep.Binary, "server", "-addr", "127.0.0.1:0", "-cert", cert, "-key", key, "-root", root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ready" || f[2] != ep.Version {
		t.Fatalf("server %s said %q (%v)", ep.Version, line, err)
	}
	return f[1]
}

// writeCert writes a self-signed ECDSA certificate for 127.0.0.1 and its key (PEM) into dir.
func writeCert(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pltlab interop"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(k)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	return cert, key
}
