package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/server"
	"github.com/spf13/cobra"
)

// serveFlags are the command line of 'pltlab serve'.
type serveFlags struct {
	pagesDir, spec, har, addr, h1Addr, protocols, tcpCC, tlsVersion, host, certOut string
	h3Stack, quicCC                                                                string
	seed                                                                           int64
	zeroRTT, json                                                                  bool
}

// newServeCmd builds 'pltlab serve': serve a page over HTTP/1.1, HTTP/2 and HTTP/3 until interrupted.
func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve (--pages DIR | --spec SPEC | --har FILE) [flags]",
		Short: "Serve a test page over HTTP/1.1, HTTP/2 and HTTP/3 until interrupted",
		Long: `serve serves a generated page with one handler over three listeners: HTTP/2 over TLS on
--addr (TCP, ALPN h2 only), HTTP/3 over QUIC on the same port number (UDP), and HTTP/1.1 over
TLS on --h1-addr (TCP, ALPN http/1.1 only; default: the next port, or a free one with port 0).
TCP responses carry Alt-Svc: h3=":PORT". The TLS certificate (ECDSA P-256 for --host) is made at
start; its SPKI pin is printed for Chromium's --ignore-certificate-errors-spki-list. --spec
generates the page into a temporary directory that is removed on exit. --har replays a HAR 1.2
with response bodies instead (README "Replay a HAR"): every host it recorded is served and named
on the certificate, --host standing for its main document's host.
Paths: /index.html (also /), the page's objects, /healthz, /manifest.json, /_pltlab/stats.`,
		Example: `  ./bin/pltlab serve --spec 10x30KB --addr 127.0.0.1:0
  ./bin/pltlab serve --spec carlucci2015 --tls 1.2 --tcp-cc reno --0rtt --json
  ./bin/pltlab serve --spec 10x30KB --addr 127.0.0.1:0 --h3-stack ngtcp2 --quic-cc bbr
  ./bin/pltlab pages --spec 10x30KB --out /tmp/page10 --force && ./bin/pltlab serve --pages /tmp/page10 --protocols h2,h3
  ./bin/pltlab serve --har /tmp/a/rec/run-0000/load.har --addr 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pagesDir, "pages", "", "page directory written by 'pltlab pages'")
	fl.StringVar(&f.spec, "spec", "", "generate this page spec (preset or [COUNTx]SIZE[:TYPE][@ORIGIN] items) into a temporary directory")
	fl.StringVar(&f.har, "har", "", "replay this HAR 1.2 file (response bodies recorded: DevTools \"Save all as HAR with content\", or pltlab --artifacts)")
	fl.Int64Var(&f.seed, "seed", pages.DefaultSeed, "generator seed for --spec")
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8443", "HOST:PORT for HTTP/2 (TCP) and HTTP/3 (UDP); port 0 picks a free one")
	fl.StringVar(&f.h1Addr, "h1-addr", "", "HOST:PORT for HTTP/1.1 (default: the port after --addr's)")
	fl.StringVar(&f.protocols, "protocols", strings.Join(server.DefaultProtocols, ","), "protocols to serve: comma-separated h1, h2, h3")
	fl.StringVar(&f.tcpCC, "tcp-cc", server.DefaultTCPCC, "TCP congestion control: "+strings.Join(server.KnownTCPCCs, "|"))
	fl.StringVar(&f.tlsVersion, "tls", server.DefaultTLSVersion, "highest TLS version on TCP: 1.2|1.3 (QUIC is always 1.3)")
	fl.BoolVar(&f.zeroRTT, "0rtt", false, "accept QUIC 0-RTT on resumed connections (quic-go; ngtcp2 always accepts it)")
	fl.StringVar(&f.h3Stack, "h3-stack", server.StackQUICGo, "HTTP/3 stack serving h3: "+strings.Join(server.H3Stacks, ", ")+" (ngtcp2: Debian's gtlsserver, static files only)")
	fl.StringVar(&f.quicCC, "quic-cc", "", "the h3 stack's congestion controller: quic-go has "+server.QUICGoCC+" only; ngtcp2 "+strings.Join(server.Ngtcp2CCs, ", ")+" (default "+server.DefaultNgtcp2CC+")")
	fl.StringVar(&f.host, "host", server.DefaultHost, "TLS/SNI hostname of the certificate")
	fl.StringVar(&f.certOut, "cert-out", "", "also write cert.pem and key.pem into this directory")
	fl.BoolVar(&f.json, "json", false, "print the start-up facts as one JSON object")
	return cmd
}

// runServe checks the flags, starts the server, prints its facts and serves until interrupted.
func runServe(cmd *cobra.Command, f serveFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	var archive *pages.Archive
	dir, cleanup := f.har, func() {}
	if f.har != "" {
		if archive, err = pages.ReadArchive(f.har); err != nil {
			return usagef("bad --har %q: %v", f.har, err)
		}
	} else if dir, cleanup, err = f.pageDir(cmd); err != nil {
		return err
	}
	defer cleanup()
	srv, err := server.NewSites([]server.Site{{Dir: dir, Archive: archive}}, append(opts, server.WithLogger(slog.Default()))...)
	if errors.Is(err, server.ErrBadOption) {
		return usagef("%v", err)
	}
	if err != nil {
		return fmt.Errorf("load page: %w", err)
	}
	var certFile, keyFile string
	if f.certOut != "" {
		if certFile, keyFile, err = srv.WriteCert(f.certOut); err != nil {
			return err
		}
	}
	if err := srv.Start(cmd.Context()); err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	facts := newServeFacts(srv.Info(), dir, certFile, keyFile)
	if f.json {
		err = json.NewEncoder(cmd.OutOrStdout()).Encode(facts)
	} else {
		err = facts.print(cmd.OutOrStdout())
	}
	if err != nil {
		_ = srv.Close()
		return err
	}
	<-cmd.Context().Done()
	if err := srv.Close(); err != nil {
		return fmt.Errorf("stop server: %w", err)
	}
	return &exitError{code: 130} // stopped by an interrupt, as every pltlab command
}

// options turns the flags into server options; bad values are usage errors.
func (f serveFlags) options() ([]server.Option, error) {
	if n := btoi(f.pagesDir != "") + btoi(f.spec != "") + btoi(f.har != ""); n != 1 {
		return nil, usagef("give exactly one of --pages DIR, --spec SPEC (a preset name or [COUNTx]SIZE[:TYPE][@ORIGIN] items like 10x30KB) or --har FILE (a HAR 1.2 with response bodies)")
	}
	protos, err := protocol.ParseList(f.protocols)
	if err != nil {
		return nil, usagef("bad --protocols %q: %v (comma-separated, each at most once)", f.protocols, err)
	}
	if !slices.Contains(server.KnownTCPCCs, f.tcpCC) {
		return nil, usagef("bad --tcp-cc %q: accepted: %s", f.tcpCC, strings.Join(server.KnownTCPCCs, ", "))
	}
	if !slices.Contains(server.TLSVersions, f.tlsVersion) {
		return nil, usagef("bad --tls %q: accepted: %s", f.tlsVersion, strings.Join(server.TLSVersions, ", "))
	}
	for name, a := range map[string]string{"--addr": f.addr, "--h1-addr": f.h1Addr} {
		if a == "" && name == "--h1-addr" {
			continue
		}
		if _, port, err := net.SplitHostPort(a); err != nil || !validPort(port) {
			return nil, usagef("bad %s %q: accepted: HOST:PORT such as 127.0.0.1:8443 (port 0 picks a free one)", name, a)
		}
	}
	if f.certOut != "" && !dirOrMakeable(f.certOut) {
		return nil, usagef("bad --cert-out %s: not a directory; accepted a directory to write cert.pem and key.pem into (made when absent)", f.certOut)
	}
	if err := server.CheckH3Stack(f.h3Stack, f.quicCC); err != nil {
		return nil, usagef("bad --h3-stack/--quic-cc: %v", err)
	}
	if f.h3Stack == server.StackNgtcp2 && slices.Contains(protos, "h3") {
		if err := server.CheckNgtcp2(); err != nil {
			return nil, usagef("%v", err)
		}
	}
	opts := []server.Option{server.WithAddr(f.addr), server.WithProtocols(protos...), server.WithTCPCC(f.tcpCC),
		server.WithTLSVersion(f.tlsVersion), server.With0RTT(f.zeroRTT), server.WithHost(f.host),
		server.WithH3Stack(f.h3Stack, f.quicCC)}
	if f.h1Addr != "" {
		opts = append(opts, server.WithH1Addr(f.h1Addr))
	}
	return opts, nil
}

// dirOrMakeable reports whether path is a directory, or absent below a directory (the nearest
// existing one), so that os.MkdirAll can make it.
func dirOrMakeable(path string) bool {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			return st.IsDir()
		}
		if !errors.Is(err, os.ErrNotExist) || p == filepath.Dir(p) {
			return false
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

// pageDir returns the page directory: --pages as given, or --spec generated into a temporary
// directory that cleanup (also run on a forced exit) removes.
func (f serveFlags) pageDir(cmd *cobra.Command) (dir string, cleanup func(), err error) {
	if f.pagesDir != "" {
		if st, err := os.Stat(f.pagesDir); err != nil || !st.IsDir() {
			return "", nil, usagef("bad --pages %q: not a directory; accepted: a page directory written by 'pltlab pages'", f.pagesDir)
		}
		if m, err := pages.ReadManifest(f.pagesDir); err != nil || m.Spec == "" {
			return "", nil, usagef("bad --pages %q: no pltlab page manifest (%s) in it; accepted: a page directory written by 'pltlab pages'", f.pagesDir, pages.ManifestFile)
		}
		return f.pagesDir, func() {}, nil
	}
	spec, err := pages.ParseSpec(f.spec)
	if err != nil {
		return "", nil, usagef("bad --spec: %v", err)
	}
	tmp, err := os.MkdirTemp("", "pltlab-serve-")
	if err != nil {
		return "", nil, fmt.Errorf("create temporary page directory: %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	onForcedExit(cleanup)
	dir = filepath.Join(tmp, "page")
	if _, err := pages.GenerateContext(cmd.Context(), dir, spec, f.seed); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("generate page %s: %w", f.spec, err)
	}
	return dir, cleanup, nil
}

// serveFacts is what 'pltlab serve' prints at start (one JSON object with --json).
type serveFacts struct {
	server.Info
	URLs       map[string]string `json:"urls"`
	PageDir    string            `json:"page_dir"`
	Page       string            `json:"page"`
	Objects    int               `json:"objects"`
	TotalBytes int64             `json:"total_bytes"`
	CertFile   string            `json:"cert_file,omitempty"`
	KeyFile    string            `json:"key_file,omitempty"`
}

func newServeFacts(i server.Info, dir, certFile, keyFile string) serveFacts {
	f := serveFacts{Info: i, URLs: map[string]string{}, PageDir: dir, CertFile: certFile, KeyFile: keyFile}
	for _, p := range server.DefaultProtocols {
		if u := i.URL(p); u != "" {
			f.URLs[p] = u
		}
	}
	if m := i.Manifest; m != nil {
		f.Page, f.Objects, f.TotalBytes = m.Spec, len(m.Objects), m.TotalBytes
	}
	return f
}

// print writes the facts for a person, with a curl line per TCP protocol to try.
func (f serveFacts) print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "serving page %s (%d objects, %d bytes) from %s as %s\n", f.Page, f.Objects, f.TotalBytes, f.PageDir, f.Host)
	for _, p := range protocol.Table {
		if u, a := f.URLs[p.Name], f.Addrs[p.Name]; u != "" {
			what := fmt.Sprintf("TCP %s, ALPN %s", a, p.ALPN)
			if p.Transport == protocol.QUIC {
				what = fmt.Sprintf("UDP %s, QUIC, ALPN %s", a, p.ALPN)
			}
			fmt.Fprintf(&b, "  %s  %s  (%s)\n", p.Name, u, what)
		}
	}
	fmt.Fprintf(&b, "SPKI pin: %s\n", f.SPKI)
	if len(f.Sites) > 0 && len(f.Sites[0].Origins) > 0 {
		fmt.Fprintf(&b, "other origins of the page: %s (named without a port: map each to the protocol's IP:PORT, --host-resolver-rules=\"MAP HOST IP:PORT\", as 'pltlab load' does)\n",
			strings.Join(f.Sites[0].Origins, ", "))
	}
	zero := map[bool]string{true: "on", false: "off"}[f.ZeroRTT]
	fmt.Fprintf(&b, "TCP: congestion control %s, TLS up to %s; QUIC: TLS 1.3, 0-RTT %s, UDP buffers rcv %d snd %d B\n",
		f.TCPCC, f.TLSVersion, zero, f.UDPRcvBuf, f.UDPSndBuf)
	fmt.Fprintf(&b, "HTTP/3 stack: %s; QUIC congestion control: %s\n", f.QUICStack, f.QUICCC)
	curlFlag := map[protocol.Version]string{protocol.HTTP1: "--http1.1", protocol.HTTP2: "--http2"}
	for _, p := range protocol.Table {
		a := f.Addrs[p.Name]
		if a == "" || curlFlag[p.Version] == "" {
			continue // Debian's curl has no HTTP/3
		}
		host, port, _ := net.SplitHostPort(a)
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		fmt.Fprintf(&b, "try %s: curl -k %s --resolve %s:%s:%s %s -o /dev/null -w '%%{http_version}\\n'\n", p.Name, curlFlag[p.Version], f.Host, port, host, f.URLs[p.Name])
	}
	if f.CertFile != "" {
		fmt.Fprintf(&b, "certificate: %s, key: %s\n", f.CertFile, f.KeyFile)
	}
	b.WriteString("serving until interrupted (Ctrl-C)\n")
	_, err := io.WriteString(w, b.String())
	return err
}
