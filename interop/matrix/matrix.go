// Package matrix starts the servers of the interop matrix by name and runs package interop's
// probe cases against them: the project's own HTTP/3 server ("quic-go", the release pltlab
// links), Debian's ngtcp2 server ("ngtcp2") and any quic-go release's interop endpoint
// ("quic-go@v0.40.1", built on demand by interop/quicgo). `pltlab interop` and the study
// `evolution` share it, so both start, name and record a server the same way.
package matrix

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/quicgo"
	"github.com/pltlab/pltlab/server"
)

// Server names: the project's own server on quic-go, Debian's ngtcp2 server, and the prefix of
// a quic-go release's endpoint ("quic-go@v0.40.1").
const (
	QUICGo        = server.StackQUICGo
	Ngtcp2        = server.StackNgtcp2
	ReleasePrefix = "quic-go@"
)

// ReadyTimeout bounds how long a release's endpoint may take to print its "ready" line.
const ReadyTimeout = 20 * time.Second

// Release returns the quic-go release a server name asks for ("quic-go@v0.40.1": "v0.40.1")
// and true; false for any other name.
func Release(name string) (string, bool) {
	return strings.CutPrefix(name, ReleasePrefix)
}

// ReleaseName is the server name of a quic-go release ("v0.40.1": "quic-go@v0.40.1").
func ReleaseName(version string) string { return ReleasePrefix + version }

// CheckServer returns nil for a server name Start accepts: quic-go, ngtcp2, or quic-go@vX.Y.Z
// of a release in quic-go's history (quicgo.CheckVersion: nothing is fetched). The error names
// the value and what is accepted.
func CheckServer(name string) error {
	if v, ok := Release(name); ok {
		if err := quicgo.CheckVersion(v); err != nil {
			return fmt.Errorf("%q: %w", name, err)
		}
		return nil
	}
	if !slices.Contains(server.H3Stacks, name) {
		return fmt.Errorf("%q: accepted %s, or quic-go@vX.Y.Z (a release v0.33.0 to v0.66.x)", name, strings.Join(server.H3Stacks, ", "))
	}
	return nil
}

// ParseServers splits a comma-separated list of server names and checks each (CheckServer) and
// that none is given twice. It needs nothing from the network and starts nothing.
func ParseServers(list string) ([]string, error) { return parseNames(list, CheckServer) }

// parseNames splits a comma-separated list of names, checks each with check and that none is
// given twice.
func parseNames(list string, check func(string) error) ([]string, error) {
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if err := check(s); err != nil {
			return nil, err
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("%q: given twice", s)
		}
		out = append(out, s)
	}
	return out, nil
}

// Ngtcp2Missing returns nil when the ngtcp2 server (Debian's gtlsserver) is installed, else an
// error naming the binary and its package.
func Ngtcp2Missing() error {
	if _, err := exec.LookPath(server.Ngtcp2Binary); err != nil {
		return fmt.Errorf("%s not found (Debian package ngtcp2-server; make setup installs it): %w", server.Ngtcp2Binary, err)
	}
	return nil
}

// Options configures Start.
type Options struct {
	// Progress receives one line per step of a release's build (quicgo.Options.Progress); nil:
	// none.
	Progress func(line string)
	// Cache is the directory of built endpoints (quicgo.Options.Cache; "" its default).
	Cache string
	// Logger is the project's server's logger (nil: slog.Default()).
	Logger *slog.Logger
}

// Target is a started server: its name, the exact version that runs, its UDP address on
// loopback and, for a release's endpoint, its build.
type Target struct {
	// Name is the server name it was started as ("quic-go@v0.40.1").
	Name string
	// Version is the version read from what runs: quic-go's build information, gtlsserver's
	// libraries, or the endpoint's own "ready" line with the build's toolchain.
	Version string
	// Addr is the server's UDP address ("127.0.0.1:PORT") and Host the name its certificate is
	// for.
	Addr, Host string
	// Build is a release endpoint's provenance (nil for the other servers).
	Build *interop.Build
	close func() error
}

// Close stops the server and removes what Start made for it.
func (t *Target) Close() error {
	if t == nil || t.close == nil {
		return nil
	}
	return t.close()
}

// Start starts server name (CheckServer) on 127.0.0.1, port chosen by the system: the project's
// server with HTTP/3 only for quic-go and ngtcp2, or a release's endpoint built (or taken from
// the cache) by quicgo.Build, with a fresh self-signed certificate. Errors: a bad name, a
// missing gtlsserver, a release that does not build, an endpoint that does not say "ready" with
// its release within ReadyTimeout.
func Start(ctx context.Context, name string, o Options) (*Target, error) {
	if err := CheckServer(name); err != nil {
		return nil, err
	}
	if v, ok := Release(name); ok {
		return startRelease(ctx, name, v, o)
	}
	if name == Ngtcp2 {
		if err := Ngtcp2Missing(); err != nil {
			return nil, err
		}
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	srv, err := server.New("", server.WithAddr("127.0.0.1:0"), server.WithProtocols("h3"), server.WithH3Stack(name, ""), server.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", name, err)
	}
	if err := srv.Start(ctx); err != nil {
		return nil, fmt.Errorf("start server %s: %w", name, err)
	}
	info := srv.Info()
	return &Target{Name: name, Version: info.QUICStack, Addr: info.Addr("h3"), Host: info.Host, close: srv.Close}, nil
}

// startRelease builds release v's endpoint and starts its server.
func startRelease(ctx context.Context, name, v string, o Options) (*Target, error) {
	ep, err := quicgo.Build(ctx, v, quicgo.Options{Cache: o.Cache, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pltlab-interop-")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Target, error) { os.RemoveAll(dir); return nil, err }
	cert, key, err := writeCert(dir)
	if err != nil {
		return fail(err)
	}
	root := filepath.Join(dir, "www")
	if err := os.Mkdir(root, 0o755); err != nil {
		return fail(err)
	}
	cmd := exec.Command(ep.Binary, "server", "-addr", "127.0.0.1:0", "-cert", cert, "-key", key, "-root", root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("start %s endpoint: %w", v, err))
	}
	stop := func() error {
		cmd.Process.Kill()
		cmd.Wait()
		return os.RemoveAll(dir)
	}
	type line struct {
		s   string
		err error
	}
	ready := make(chan line, 1)
	go func() {
		s, err := bufio.NewReader(out).ReadString('\n')
		ready <- line{s, err}
	}()
	var l line
	select {
	case l = <-ready:
	case <-time.After(ReadyTimeout):
		l.err = fmt.Errorf("no ready line within %v", ReadyTimeout)
	case <-ctx.Done():
		l.err = ctx.Err()
	}
	f := strings.Fields(l.s)
	if l.err != nil || len(f) != 3 || f[0] != "ready" || f[2] != v {
		stop()
		return nil, fmt.Errorf("quic-go %s endpoint said %q (%v): %s", v, strings.TrimSpace(l.s), l.err, strings.TrimSpace(stderr.String()))
	}
	return &Target{Name: name, Version: fmt.Sprintf("quic-go %s (pltlab interop endpoint, %s)", f[2], ep.Toolchain), Addr: f[1], Host: "localhost",
		Build: &interop.Build{Release: ep.Version, Era: ep.Era, Toolchain: ep.Toolchain, Sum: ep.Sum, BinarySHA256: ep.BinarySHA256},
		close: stop}, nil
}

// Run runs each case against t in turn with the probe client, calling each (when set) with
// every record as it is made, and returns the records; it stops early when ctx ends or each
// fails (that error). quiet and window are the cases' interop.Target durations (0: defaults);
// clientVersion is pltlab's build (interop.ProbeVersion's argument).
func (t *Target) Run(ctx context.Context, cases []interop.Case, quiet, window time.Duration, clientVersion string, each func(interop.Record) error) ([]interop.Record, error) {
	it := interop.Target{Addr: t.Addr, ServerName: t.Host, Quiet: quiet, Window: window}
	var recs []interop.Record
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		r := interop.Run(ctx, c, it)
		rec := interop.NewRecord(r, c, interop.ProbeClient, interop.ProbeVersion(clientVersion), t.Name, t.Version, t.Addr, "loopback")
		rec.Build = t.Build
		recs = append(recs, rec)
		if each != nil {
			if err := each(rec); err != nil {
				return recs, err
			}
		}
	}
	return recs, nil
}

// writeCert writes a self-signed ECDSA P-256 certificate for 127.0.0.1 and localhost, valid
// for a day, and its key (PEM) into dir.
func writeCert(dir string) (cert, key string, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pltlab interop"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return "", "", err
	}
	kd, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return "", "", err
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	err = errors.Join(os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644),
		os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600))
	return cert, key, err
}
