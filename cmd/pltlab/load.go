package main

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// loadFlags are the flags of 'pltlab load'.
type loadFlags struct {
	protocol string
	spki     string
	resolve  string
	chrome   string
	timeout  time.Duration
	mode     string
	device   string
	art      artifactFlags
}

// loadTarget is a checked 'pltlab load' command line.
type loadTarget struct {
	url      string // the URL as Chromium loads it (host = the mapped hostname)
	host, ip string // --host-resolver-rules MAP host ip
	port     int
	addr     string        // ip:port, for the pin and the manifest
	dev      device.Device // --device
}

// newLoadCmd builds 'pltlab load'.
func newLoadCmd() *cobra.Command {
	f := loadFlags{timeout: browser.DefaultTimeout, mode: string(result.Cold)}
	cmd := &cobra.Command{
		Use:   "load URL --protocol h1|h2|h3",
		Short: "Load one page served by 'pltlab serve' in Chromium and print its verified record",
		Long: `load makes one measured, cold page load of URL in headless Chromium forced to one
protocol, verifies it against the server's manifest (every object whole, every
resource on the requested protocol) and prints the record as one JSON line.
It exits 0 only for a valid load (1 for an invalid or timed-out one).

The browser reaches the server through --host-resolver-rules: a URL with a
hostname is mapped to 127.0.0.1 unless --resolve HOST:IP says otherwise; a URL
with a bare IP is loaded as https://plt.test:PORT/... mapped to that IP (TLS
needs a hostname). Without --spki the certificate's pin is taken from the
server at first contact (trust on first use), and stderr says so.

With --artifacts DIR, the load's HAR and the browser's NetLog go to DIR/load-TIME/ (qlog and
pcap need the server and link in this process: use 'pltlab run'); --artifacts-for invalid
keeps them only for an invalid or timed-out load. A file not written whole is listed in
"artifacts_failed" with the error, and the exit code is 3 (1 for an invalid load).`,
		Example: `  ./bin/pltlab serve --spec 10x30KB --addr 127.0.0.1:8443 &
  ./bin/pltlab load https://plt.test:8443/index.html --protocol h2
  ./bin/pltlab load https://127.0.0.1:8443/index.html --protocol h3 --timeout 30s
  ./bin/pltlab load https://plt.test:8443/index.html --protocol h2 --artifacts /tmp/a`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("load takes one URL, got %d arguments: accepted pltlab load https://plt.test:PORT/index.html --protocol h1|h2|h3", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runLoad(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.protocol, "protocol", "", "protocol to force: h1, h2 or h3 (required)")
	fl.StringVar(&f.spki, "spki", "", "server certificate pin: base64 SHA-256 of its SubjectPublicKeyInfo (default: read from the server)")
	fl.StringVar(&f.resolve, "resolve", "", "map HOST to IP inside Chromium, as HOST:IP (default: the URL's host to 127.0.0.1)")
	fl.StringVar(&f.chrome, "chrome", "", "Chromium executable (default: $PLTLAB_CHROME, then chromium on PATH)")
	fl.DurationVar(&f.timeout, "timeout", f.timeout, "deadline of the load; a load that hits it is recorded as timed out")
	fl.StringVar(&f.device, "device", "desktop", "emulated client device, as 'pltlab run --device' (a budget needs root)")
	fl.StringVar(&f.mode, "mode", f.mode, "cold (fresh browser context); warm needs the server in-process: use 'pltlab run --mode warm'")
	f.art.add(fl, "har,netlog")
	return cmd
}

// runLoad checks the command line, launches Chromium, loads the page and prints the record.
func runLoad(cmd *cobra.Command, rawURL string, f loadFlags) error {
	plan, err := planLoad(rawURL, f)
	if err != nil {
		return err
	}
	ac, err := f.art.config(artifacts.HAR, artifacts.NetLog)
	if err != nil {
		return err
	}
	if err := experiment.CheckDevice(experiment.Config{Device: f.device}); err != nil {
		return usagef("%v", err)
	}
	ctx := cmd.Context()
	pin := f.spki
	if pin == "" {
		if pin, err = browser.PinFromServer(ctx, plan.addr, plan.host); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: pinned the certificate %s presented at first contact: --spki %s\n", plan.addr, pin)
	}
	m, err := browser.FetchManifest(ctx, plan.addr, plan.host, pin)
	if err != nil {
		return err
	}
	if err := checkListener(ctx, plan.host, plan.ip, plan.port, protocol.MustLookup(f.protocol), []int{plan.port + 1, plan.port - 1}); err != nil {
		return err
	}
	experimentName := "load-" + time.Now().UTC().Format("20060102T150405Z")
	// The one artifacts adapter of page loads (the runner's): HAR path and label, NetLog, keep rule.
	ev, err := experiment.NewLoadArtifacts(ac, experimentName, nil, slog.Default())
	if err != nil {
		return err
	}
	opts := append([]browser.Option{browser.WithChrome(f.chrome), browser.WithProtocol(f.protocol),
		browser.WithSPKI(pin), browser.WithResolve(plan.host, plan.ip), browser.WithPort(plan.port), browser.WithOriginHosts(m.OriginHosts()...),
		browser.WithLogger(slog.Default()), browser.WithCreator(pltlabVersion()), browser.WithDevice(plan.dev)}, ev.BrowserOptions(pltlabVersion())...)
	target := browser.Target{URL: plan.url, Protocol: f.protocol, Manifest: m, Mode: result.Cold, Timeout: f.timeout,
		Visual: f.art.visual}
	if err := ev.Begin(0, nil, &target); err != nil {
		return err
	}
	b, err := browser.Launch(ctx, opts...)
	if err != nil {
		_, eerr := ev.End(nil, nil, "load", "")
		return errors.Join(err, eerr)
	}
	rec, err := b.Load(ctx, target)
	netlog := b.NetLogPath()
	if cerr := b.Close(); err == nil && cerr != nil {
		slog.Warn("close chromium", "err", cerr)
	}
	if err != nil {
		_, eerr := ev.End(nil, nil, "load", netlog)
		return errors.Join(err, eerr, ev.Discard(netlog))
	}
	if ev != nil {
		rec.Experiment = experimentName
		kept, err := ev.End(nil, rec, "load", netlog) // --artifacts-for decides
		if !kept {
			err = errors.Join(err, ev.Discard(netlog))
		}
		if err != nil {
			slog.Warn("artifacts", "err", err)
		}
	}
	if err := result.NewWriter(cmd.OutOrStdout()).Write(rec); err != nil {
		return err
	}
	if !rec.Valid {
		return &exitError{code: 1, err: fmt.Errorf("invalid load: %s", rec.InvalidReason)}
	}
	return artifactsExit(nil, len(rec.ArtifactsFailed))
}

// planLoad checks the flags and works out the URL Chromium loads and where the server is.
func planLoad(rawURL string, f loadFlags) (loadTarget, error) {
	names := strings.Join(protocol.Names(), ", ")
	switch {
	case f.protocol == "":
		return loadTarget{}, usagef("--protocol is required: accepted %s", names)
	case !protocol.Known(f.protocol):
		return loadTarget{}, usagef("bad --protocol %q: accepted %s", f.protocol, names)
	}
	switch f.mode {
	case string(result.Cold):
	case string(result.Warm):
		return loadTarget{}, usagef("--mode warm: pltlab load cannot make a separate 'pltlab serve' close its connections between the priming and the measured load; use 'pltlab run --mode warm'")
	default:
		return loadTarget{}, usagef("bad --mode %q: accepted cold", f.mode)
	}
	if f.timeout <= 0 {
		return loadTarget{}, usagef("bad --timeout %v: accepted a positive duration such as 60s", f.timeout)
	}
	if pin, err := base64.StdEncoding.DecodeString(f.spki); f.spki != "" && (err != nil || len(pin) != sha256.Size) {
		return loadTarget{}, usagef("bad --spki %q: accepted the base64 SHA-256 of the server's SubjectPublicKeyInfo (44 characters, as 'pltlab serve' prints it), or none to read it from the server", f.spki)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return loadTarget{}, usagef("bad URL %q: accepted https://HOST[:PORT]/PATH, as served by 'pltlab serve'", rawURL)
	}
	port := 443
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil || port < 1 || port > 65535 {
			return loadTarget{}, usagef("bad port in URL %q: accepted 1-65535", rawURL)
		}
	}
	host, ip, err := resolveFor(u.Hostname(), f.resolve)
	if err != nil {
		return loadTarget{}, err
	}
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	dev, err := device.Parse(f.device)
	if err != nil {
		return loadTarget{}, usagef("%v", err)
	}
	return loadTarget{url: u.String(), host: host, ip: ip, port: port, addr: net.JoinHostPort(ip, strconv.Itoa(port)), dev: dev}, nil
}

// resolveFor returns the hostname Chromium uses and the IP it maps to, from the URL's host and
// --resolve HOST:IP.
func resolveFor(urlHost, resolve string) (host, ip string, err error) {
	urlIP, urlIsIP := netip.ParseAddr(urlHost)
	if resolve == "" {
		if urlIsIP == nil {
			return browser.DefaultHost, urlIP.String(), nil
		}
		return urlHost, browser.DefaultIP, nil
	}
	host, ip, ok := strings.Cut(resolve, ":")
	addr, perr := netip.ParseAddr(ip)
	if _, hostIsIP := netip.ParseAddr(host); !ok || host == "" || perr != nil || hostIsIP == nil {
		return "", "", usagef("bad --resolve %q: accepted HOST:IP with a hostname, e.g. plt.test:127.0.0.1", resolve)
	}
	if urlIsIP != nil && urlHost != host {
		return "", "", usagef("--resolve %q maps %s, but the URL's host is %s", resolve, host, urlHost)
	}
	if urlIsIP == nil && urlIP != addr {
		return "", "", usagef("--resolve %q maps %s to %s, but the URL names %s", resolve, host, addr, urlIP)
	}
	return host, addr.String(), nil
}
