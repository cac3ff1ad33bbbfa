package matrix

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// Chromium is the client name of Chromium (package browser's launch, forced onto HTTP/3 on the
// server's origin): an exchange client only.
const Chromium = "chromium"

// ChromiumPage is the page Chromium loads from the server before it fetches the case's files:
// served beside them, so the page is of their origin and its fetch() may read their bytes
// (another origin's responses are opaque without CORS headers, which the servers do not send).
// Not index.html, which Go's file server answers with a redirect to "/".
const ChromiumPage = "page.html"

// chromiumPageHTML is ChromiumPage's content.
const chromiumPageHTML = "<!doctype html><meta charset=utf-8><title>pltlab interop</title>\n"

// CheckClient returns nil for a client name RunExchange accepts: a server name (CheckServer)
// or chromium. The error names the value and what is accepted.
func CheckClient(name string) error {
	if name == Chromium {
		return nil
	}
	if _, ok := Release(name); ok || slices.Contains(server.H3Stacks, name) {
		return CheckServer(name)
	}
	return fmt.Errorf("%q: accepted %s, %s, or quic-go@vX.Y.Z (a release v0.33.0 to v0.66.x)", name, strings.Join(server.H3Stacks, ", "), Chromium)
}

// ParseClients is ParseServers for clients (CheckClient: chromium too).
func ParseClients(list string) ([]string, error) { return parseNames(list, CheckClient) }

// openChromium finds Chromium (browser.FindChromium: $PLTLAB_CHROME or the PATH) and reads its
// version from `chromium --version`.
func openChromium(ctx context.Context) (Peer, error) {
	path, err := browser.FindChromium("")
	if err != nil {
		return Peer{}, err
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return Peer{}, fmt.Errorf("%s --version: %w", path, err)
	}
	return Peer{Name: Chromium, Version: strings.TrimSpace(string(out)), Binary: path}, nil
}

// chromiumKeyUpdateAfter is how many 1-RTT packets Chromium sends in one key phase before it
// initiates a key update in keyupdate (browser.WithKeyUpdateAfter): about 100 packets, as
// quic-go's first update (handshake.FirstKeyUpdateInterval); Chromium, a downloading client,
// sends some 250 packets (mostly ACKs) in the 2 MB transfer, so it initiates twice.
const chromiumKeyUpdateAfter = 100

// chromiumVersionV2 is QUICHE's name of QUIC v2 for Chromium's --quic-version (RFC 9369).
const chromiumVersionV2 = "RFCv2"

// chromiumRuns runs Chromium c.runs() times against the server at addr ("IP:PORT") through link
// l, run i saving the files in d.run(i); each run is a fresh browser and profile (a new
// connection with no session to resume), and for resumption and 0-RTT it fetches the files
// twice, closing its connections between (a second connection that may resume the first's
// session). v2 makes it offer QUIC v2 alone (--quic-version=RFCv2), keyupdate initiate key
// updates (chromiumKeyUpdateAfter). It returns each run's outcome, for a failing case's reason.
func chromiumRuns(ctx context.Context, l shaping.Link, client Peer, addr string, d peerDir, c Exchange, names []string) string {
	pin, err := certPin(d.cert)
	if err != nil {
		return err.Error()
	}
	_, port, _ := net.SplitHostPort(addr)
	origin := "https://" + net.JoinHostPort(browser.DefaultHost, port)
	var urls []string
	for _, n := range names {
		urls = append(urls, origin+"/"+n)
	}
	p, _ := strconv.Atoi(port)
	opts := []browser.Option{browser.WithChrome(client.Binary), browser.WithNetNS(l.Namespace()), browser.WithProtocol("h3"),
		browser.WithResolve(browser.DefaultHost, l.HostAddr().String()), browser.WithPort(p), browser.WithSPKI(pin),
		browser.WithTempDir(d.root), browser.WithKeyLog(d.clientKeys), browser.WithNetBenchmarking()}
	if c.Client.V2 {
		opts = append(opts, browser.WithQUICVersion(chromiumVersionV2))
	}
	if c.Client.KeyUpdate {
		opts = append(opts, browser.WithKeyUpdateAfter(chromiumKeyUpdateAfter))
	}
	rounds := 1
	if c.Client.Resume || c.Client.ZeroRTT {
		rounds = 2
	}
	var sums []string
	for i := 1; i <= c.runs(); i++ {
		rctx, cancel := context.WithTimeout(ctx, ClientTimeout)
		got, sum := chromiumRun(rctx, opts, origin+"/"+ChromiumPage, urls, rounds)
		cancel()
		sums = append(sums, sum)
		if err := saveRounds(d, d.run(i), names, got); err != nil {
			sums = append(sums, err.Error())
		}
	}
	return strings.Join(sums, "; ")
}

// chromiumRun launches Chromium with opts and has it fetch urls from page rounds times, closing
// its connections between rounds; got holds each round's Fetched (shorter when a round
// failed), summary what each round gave.
func chromiumRun(ctx context.Context, opts []browser.Option, page string, urls []string, rounds int) (got [][]browser.Fetched, summary string) {
	b, err := browser.Launch(ctx, opts...)
	if err != nil {
		return nil, err.Error()
	}
	var sums []string
	for r := 1; r <= rounds; r++ {
		if r > 1 {
			if err = b.CloseConnections(ctx); err != nil {
				sums = append(sums, err.Error())
				break
			}
		}
		f, err := b.Fetch(ctx, page, urls, ClientTimeout)
		if err != nil {
			sums = append(sums, err.Error())
			break
		}
		got = append(got, f)
		sums = append(sums, fetchSummary(f))
	}
	if err := b.Close(); err != nil {
		sums = append(sums, err.Error())
	}
	return got, b.Version() + ": " + strings.Join(sums, ", ")
}

// fetchSummary is what one round of fetches gave: per URL its status and protocol, or its
// error.
func fetchSummary(f []browser.Fetched) string {
	var s []string
	for _, x := range f {
		what := fmt.Sprintf("%d %s %d bytes", x.Status, x.Protocol, len(x.Body))
		if x.Err != "" {
			what = x.Err
		}
		s = append(s, filepath.Base(x.URL)+" "+what)
	}
	return strings.Join(s, ", ")
}

// saveRounds writes into dir, for each file of names, what the rounds fetched of it, so that
// the file is whole only when every round's was (checkFiles then judges every round at once):
// nothing when a round has no body for it (or did not run), else the first body that differs
// from the one served in d.www, else the body served.
func saveRounds(d peerDir, dir string, names []string, rounds [][]browser.Fetched) error {
	var errs []error
	for i, n := range names {
		want, err := os.ReadFile(filepath.Join(d.www, n))
		if err != nil {
			return err
		}
		var bodies [][]byte
		for _, r := range rounds {
			var b []byte
			if i < len(r) {
				b = r[i].Body
			}
			bodies = append(bodies, b)
		}
		if b := worstRound(want, bodies); b != nil {
			errs = append(errs, os.WriteFile(filepath.Join(dir, n), b, 0o644))
		}
	}
	return errors.Join(errs...)
}

// worstRound is the body that shows the worst of the rounds' bodies: nil when there are no
// rounds or one has none, else the first that is not want, else want.
func worstRound(want []byte, bodies [][]byte) []byte {
	if len(bodies) == 0 || slices.ContainsFunc(bodies, func(b []byte) bool { return b == nil }) {
		return nil
	}
	for _, b := range bodies {
		if !bytes.Equal(b, want) {
			return b
		}
	}
	return want
}

// certPin is the SPKI pin (browser.SPKIPin) of the PEM certificate in file.
func certPin(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return "", fmt.Errorf("%s: no PEM block", file)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return browser.SPKIPin(cert), nil
}
