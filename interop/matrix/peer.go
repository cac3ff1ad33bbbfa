package matrix

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/quicgo"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// Ngtcp2Client is Debian's ngtcp2 example client (package ngtcp2-client).
const Ngtcp2Client = "gtlsclient"

// Peer is an endpoint program an exchange case runs as its client or its server: the interop
// endpoint of a quic-go release (interop/quicgo), Debian's ngtcp2 example programs, or, as a
// client only, Chromium.
type Peer struct {
	// Name is the name it was opened as: "quic-go" (the release pltlab links), "quic-go@v0.40.1",
	// "ngtcp2" or "chromium".
	Name string
	// Version is the exact version that runs (the endpoint's release and toolchain, the ngtcp2
	// Debian packages' versions, or what `chromium --version` says).
	Version string
	// Binary is the quic-go endpoint's or Chromium's path ("" for ngtcp2) and Build a quic-go
	// endpoint's provenance.
	Binary string
	Build  *interop.Build
}

// LinkedRelease is the quic-go release this program links ("v0.65.0"), read from its build
// information, or, where that lists no modules (test binaries), from `go list -m` in the
// working directory's module; "" when neither says.
func LinkedRelease() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == quicgo.Module {
				return d.Version
			}
		}
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", quicgo.Module).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// OpenPeer makes peer name ready to run (CheckClient's names): for quic-go the interop
// endpoint built with the release pltlab links, for quic-go@vX.Y.Z that release's (both built
// or taken from the cache by quicgo.Build, progress through o.Progress), for ngtcp2 a check that
// gtlsserver and gtlsclient are installed, for chromium the browser found and its version read.
// Errors: a bad name, a release that does not build, missing ngtcp2 programs, no Chromium
// (browser.ErrNoChromium).
func OpenPeer(ctx context.Context, name string, o Options) (Peer, error) {
	if err := CheckClient(name); err != nil {
		return Peer{}, err
	}
	if name == Chromium {
		return openChromium(ctx)
	}
	if name == Ngtcp2 {
		if err := Ngtcp2Missing(); err != nil {
			return Peer{}, err
		}
		if err := Ngtcp2ClientMissing(); err != nil {
			return Peer{}, err
		}
		return Peer{Name: name, Version: "ngtcp2 " + dpkgVersion("ngtcp2-server") + " (gtlsserver), " + dpkgVersion("ngtcp2-client") + " (gtlsclient)"}, nil
	}
	v, ok := Release(name)
	if !ok {
		if v = LinkedRelease(); v == "" {
			return Peer{}, errors.New("quic-go: this binary has no build information naming the quic-go release it links")
		}
	}
	ep, err := quicgo.Build(ctx, v, quicgo.Options{Cache: o.Cache, Progress: o.Progress})
	if err != nil {
		return Peer{}, err
	}
	return Peer{Name: name, Version: fmt.Sprintf("quic-go %s (pltlab interop endpoint, %s)", ep.Version, ep.Toolchain), Binary: ep.Binary,
		Build: &interop.Build{Release: ep.Version, Era: ep.Era, Toolchain: ep.Toolchain, Sum: ep.Sum, BinarySHA256: ep.BinarySHA256}}, nil
}

// Ngtcp2ClientMissing returns nil when the ngtcp2 client (Debian's gtlsclient) is installed,
// else an error naming the binary and its package.
func Ngtcp2ClientMissing() error {
	if _, err := exec.LookPath(Ngtcp2Client); err != nil {
		return fmt.Errorf("%s not found (Debian package ngtcp2-client; make setup installs it): %w", Ngtcp2Client, err)
	}
	return nil
}

// dpkgVersion is the installed version of Debian package pkg ("unknown" when dpkg cannot say).
func dpkgVersion(pkg string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		return "unknown"
	}
	return string(out)
}

// notSupported says why peer cannot play its role in case c ("" when it can): what the
// program offers no way to do.
func notSupported(c Exchange, client, srv Peer) string {
	if srv.Name == Chromium {
		return "Chromium is a client only"
	}
	if (c.Client.V2 && client.Name == Ngtcp2) || (c.Server.V2 && srv.Name == Ngtcp2) {
		return "ngtcp2 0.12.1 (Debian 12) knows QUIC v2 only by its provisional codepoint 0x709a50c4, not RFC 9369's 0x6b3343cf"
	}
	if c.Client.ChaCha20 && client.Name == Chromium {
		return NoChaCha20Chromium
	}
	if c.Client.ChaCha20 && client.Name != Ngtcp2 {
		return NoChaCha20QUICGo
	}
	if c.Server.Faults != (ServerFaults{}) && srv.Name == Ngtcp2 {
		return "gtlsserver cannot be made to misbehave (the faults are the quic-go endpoint's)"
	}
	if c.Client.ZeroCID && (client.Name == Ngtcp2 || client.Name == Chromium) {
		return "only a quic-go client can be made to use zero-length connection IDs"
	}
	if c.Client.Migrate && client.Name == Chromium {
		return NoMigrateChromium
	}
	return ""
}

// NoMigrateChromium is why Chromium cannot run connectionmigration as the client.
const NoMigrateChromium = "Chromium cannot be told to migrate: its QUIC connection migration (to another network on a network change, or a port change on path degradation) has no command-line switch or DevTools command that starts it"

// NoMigrateServer is why connectionmigration is unsupported with a server that forbids it, read
// from the wire: quic-go's servers before v0.51 (disable_active_migration set in every
// connection's parameters) and any server so configured.
const NoMigrateServer = "the server disabled active migration: its transport parameters carry disable_active_migration (0x0c, RFC 9000 section 18.2), so the client may not migrate to another address (and did not)"

// NoRebindServer is why rebind-port and rebind-addr are unsupported with a server that forbids
// active migration and never follows the client's new address, read from the wire (quic-go's
// servers before v0.51).
const NoRebindServer = "the server disabled active migration: its transport parameters carry disable_active_migration (0x0c, RFC 9000 section 18.2), and RFC 9000 section 9 lets such a server drop the packets a client sends from a new address rather than validate it"

// NoChaCha20Chromium is why Chromium cannot run chacha20 as the client.
const NoChaCha20Chromium = "Chromium cannot be asked to offer TLS_CHACHA20_POLY1305_SHA256 alone: its TLS 1.3 cipher suites are BoringSSL's fixed three, ordered by the CPU's AES support, and it has no switch to narrow them"

// NoChaCha20QUICGo is why a quic-go client cannot run chacha20.
const NoChaCha20QUICGo = "a quic-go client cannot offer TLS_CHACHA20_POLY1305_SHA256 alone: quic-go's TLS 1.3 suites are crypto/tls's, whose Config.CipherSuites does not apply to TLS 1.3 (\"TLS 1.3 ciphersuites are not configurable\"), and no quic-go release exports an option; quic-go's own interop endpoint narrows them with its internal/qtls.SetCipherSuite (a go:linkname into crypto/tls), a package other modules cannot import"

// claimsECN reports whether peer p claims ECN support (RFC 9000 section 13.4), and why: where it
// does not, a missing ECN mark or count is unsupported, not a failure (the Interop Runner's
// rule). ngtcp2 claims it: its library validates ECN on each path (RFC 9000 section 13.4.2)
// and its example programs set the codepoint it chooses on every datagram they send (IP_TOS)
// and read the received ones' for the ACK's ECN counts. No quic-go release's own interop
// endpoint lists the Interop Runner's ecn case (v0.33.0-v0.66.0; quic-go pull request 4207,
// "interop: enable the ECN test case", is open), so quic-go does not, though its library marks
// 1-RTT packets ECT(0) while it validates ECN since before v0.40.1 (internal/ackhandler/ecn.go,
// absent in v0.37.0).
func claimsECN(p Peer) (bool, string) {
	if p.Name == Ngtcp2 {
		return true, "claims ECN support (ngtcp2 validates ECN and its examples set and read the codepoint)"
	}
	if p.Name == Chromium {
		return false, "does not claim ECN support (pltlab asks Chromium for none)"
	}
	return false, "does not claim ECN support (no quic-go release's interop endpoint lists the ecn case; quic-go pull request 4207 is open)"
}

// peerDir is the working directory of one exchange: the files served (www), the client's
// downloads (dl, one directory per run), the certificate and the key logs.
type peerDir struct{ root, www, dl, cert, key, serverKeys, clientKeys string }

// run is the directory of the files the client saved in its run i (1, 2, ...).
func (d peerDir) run(i int) string { return filepath.Join(d.dl, strconv.Itoa(i)) }

// startServer starts srv on the link's host address with the features f and returns its UDP
// address and a stop function; unsupported is the endpoint's "unsupported FEATURE" line.
func startServer(ctx context.Context, srv Peer, host netip.Addr, d peerDir, f ServerFeatures) (addr string, stop func(), unsupported string, err error) {
	var cmd *exec.Cmd
	if srv.Name == Ngtcp2 {
		port, err := freeUDPPort(host)
		if err != nil {
			return "", nil, "", err
		}
		args := []string{"-q", "--no-quic-dump", "--no-http-dump", "-d", d.www}
		if f.Retry {
			args = append(args, "-V")
		}
		cmd = exec.CommandContext(ctx, server.Ngtcp2Binary, append(args, host.String(), strconv.Itoa(port), d.key, d.cert)...)
		cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+d.serverKeys)
		addr = netip.AddrPortFrom(host, uint16(port)).String()
	} else {
		args := []string{"server", "-addr", netip.AddrPortFrom(host, 0).String(), "-cert", d.cert, "-key", d.key, "-root", d.www, "-keylog", d.serverKeys}
		for flag, on := range map[string]bool{"-retry": f.Retry, "-0rtt": f.ZeroRTT, "-v2": f.V2, "-truncate": f.Faults.Truncate, "-no-tickets": f.Faults.NoTickets} {
			if on {
				args = append(args, flag)
			}
		}
		if f.Faults.ALPN != "" {
			args = append(args, "-alpn", f.Faults.ALPN)
		}
		cmd = exec.CommandContext(ctx, srv.Binary, args...)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, "", fmt.Errorf("start %s server: %w", srv.Name, err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	if srv.Name == Ngtcp2 {
		go io.Copy(io.Discard, out)
		time.Sleep(300 * time.Millisecond) // gtlsserver says nothing when bound
		if cmd.ProcessState != nil {
			return "", nil, "", fmt.Errorf("%s exited at once", server.Ngtcp2Binary)
		}
		return addr, stop, "", nil
	}
	line, err := readLine(out, ReadyTimeout)
	go io.Copy(io.Discard, out)
	f2 := strings.Fields(line)
	switch {
	case len(f2) == 2 && f2[0] == "unsupported":
		stop()
		return "", nil, fmt.Sprintf("the %s server does not support %s (its API era %s)", srv.Name, f2[1], srv.Build.Era), nil
	case err != nil || len(f2) != 3 || f2[0] != "ready":
		stop()
		return "", nil, "", fmt.Errorf("%s server said %q (%v)", srv.Name, line, err)
	}
	return f2[1], stop, "", nil
}

// readLine reads one line from r within d.
func readLine(r io.Reader, d time.Duration) (string, error) {
	ch := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		ch <- strings.TrimSpace(s)
	}()
	select {
	case s := <-ch:
		return s, nil
	case <-time.After(d):
		return "", fmt.Errorf("no line within %v", d)
	}
}

// freeUDPPort asks the system for a free UDP port on host.
func freeUDPPort(host netip.Addr) (int, error) {
	pc, err := net.ListenPacket("udp", netip.AddrPortFrom(host, 0).String())
	if err != nil {
		return 0, fmt.Errorf("pick a UDP port: %w", err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port, nil
}

// keyUpdateAfter is when gtlsclient starts its key update in keyupdate, after its handshake
// completes: after the handshake is confirmed (HANDSHAKE_DONE, about one 30 ms RTT later) and
// before a quic-go server's own first key update (quic-go initiates one after 100 packets,
// handshake.FirstKeyUpdateInterval: about 130 ms into the transfer at 10 Mbit/s). gtlsclient
// gives up the connection when its initiation is refused (ERR_INVALID_STATE, seen at 300 ms
// after quic-go's update, with exit status 0 and a part of the file saved).
const keyUpdateAfter = "60ms"

// migrateAfter is when the client migrates in connectionmigration, early in the 2 MiB transfer
// (1.7 s at 10 Mbit/s), so most of the file comes over the new path: gtlsclient's
// --change-local-addr counts it from its handshake's completion, the quic-go endpoint's -migrate
// from its dial's return (the handshake completed, DialEarly without 0-RTT).
const migrateAfter = "300ms"

// ngtcp2HandshakeTimeout replaces gtlsclient's 10 s limit on a whole handshake: through
// handshakeloss's 30 % loss each way one handshake in 20 outlasted 10 s here (its Initials lost
// at 1, 2 and 4 s), and gtlsclient then exits 0 with nothing saved. quic-go's own limit is 5 s
// without any packet received (HandshakeIdleTimeout), which a handshake that makes progress
// never reaches.
const ngtcp2HandshakeTimeout = "30s"

// ngtcp2ChaCha20 is gtlsclient's --ciphers (a GnuTLS priority string) that offers
// TLS_CHACHA20_POLY1305_SHA256 alone: its default, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:
// +AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM" (gtlsclient --help, 0.12.1), with
// the one cipher.
const ngtcp2ChaCha20 = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305"

// ClientTimeout bounds each run of a client program in an exchange case.
const ClientTimeout = 45 * time.Second

// runClient runs client through link l against addr for the files of c, c.runs() times, run i
// saving them in d.run(i); unsupported is the endpoint's "unsupported FEATURE" line, and summary
// the client's exit and its last output line per run, for the reason of a failed case (never
// its verdict). ClientTimeout bounds each run. Chromium runs through chromiumRuns.
func runClient(ctx context.Context, l shaping.Link, client Peer, addr string, d peerDir, c Exchange, names []string) (unsupported, summary string) {
	if client.Name == Chromium {
		return "", chromiumRuns(ctx, l, client, addr, d, c, names)
	}
	var urls []string
	for _, n := range names {
		urls = append(urls, "https://"+addr+"/"+n)
	}
	var sums []string
	for i := 1; i <= c.runs(); i++ {
		rctx, cancel := context.WithTimeout(ctx, ClientTimeout)
		unsup, sum := runClientOnce(rctx, l, client, addr, d, d.run(i), c, urls)
		cancel()
		if unsup != "" {
			return unsup, ""
		}
		sums = append(sums, sum)
	}
	return "", strings.Join(sums, "; ")
}

// runClientOnce runs the client program once (gtlsclient twice for resumption and 0-RTT),
// saving the files in dl.
func runClientOnce(ctx context.Context, l shaping.Link, client Peer, addr string, d peerDir, dl string, c Exchange, urls []string) (unsupported, summary string) {
	run := func(cmd *exec.Cmd) (string, error) {
		b, err := cmd.CombinedOutput()
		return lastLine(string(b)), err
	}
	if client.Name != Ngtcp2 {
		args := []string{"client", "-url", strings.Join(urls, ","), "-insecure", "-keylog", d.clientKeys, "-parallel", "-download", dl}
		for flag, on := range map[string]bool{"-resume": c.Client.Resume, "-0rtt": c.Client.ZeroRTT, "-v2": c.Client.V2, "-zero-cid": c.Client.ZeroCID} {
			if on {
				args = append(args, flag)
			}
		}
		if c.Client.Migrate {
			args = append(args, "-migrate", migrateAfter)
		}
		last, err := run(shaping.Command(ctx, l, client.Binary, args...))
		if f := strings.Fields(last); len(f) == 2 && f[0] == "unsupported" {
			return fmt.Sprintf("the %s client does not support %s (its API era %s)", client.Name, f[1], client.Build.Era), ""
		}
		return "", exitSummary(err, last)
	}
	host, port, _ := net.SplitHostPort(addr)
	rounds := 1
	if c.Client.Resume || c.Client.ZeroRTT {
		rounds = 2
	}
	var sums []string
	for round := 1; round <= rounds; round++ {
		args := []string{"-q", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close", "--download", dl, "--handshake-timeout=" + ngtcp2HandshakeTimeout}
		if rounds == 2 {
			args = append(args, "--session-file", filepath.Join(d.root, "session"), "--tp-file", filepath.Join(d.root, "tp"))
		}
		if !c.Client.ZeroRTT {
			args = append(args, "--disable-early-data")
		}
		if c.Client.KeyUpdate {
			args = append(args, "--key-update="+keyUpdateAfter)
		}
		if c.Client.ChaCha20 {
			args = append(args, "--ciphers="+ngtcp2ChaCha20)
		}
		if c.Client.Migrate {
			args = append(args, "--change-local-addr="+migrateAfter)
		}
		cmd := shaping.Command(ctx, l, Ngtcp2Client, append(append(args, host, port), urls...)...)
		cmd.Env = append(cmd.Env, "SSLKEYLOGFILE="+d.clientKeys)
		last, err := run(cmd)
		sums = append(sums, exitSummary(err, last))
	}
	return "", strings.Join(sums, ", ")
}

func exitSummary(err error, last string) string {
	s := "exit 0"
	if err != nil {
		s = err.Error()
	}
	if last != "" {
		s += ": " + last
	}
	return s
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
