package browser

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/protocol"
)

// DefaultHost is the hostname the browser is told to reach when WithResolve is not given; it is
// also the server's default TLS name. A hostname, never a bare IP, so that TLS sends SNI.
const DefaultHost = "plt.test"

// DefaultIP is the address DefaultHost is mapped to when WithResolve is not given (loopback).
const DefaultIP = "127.0.0.1"

// DefaultFlags are the Chromium switches every browser gets, before the protocol switches.
// They run Chromium headless and switch off everything that would make it talk to anyone but the
// page's server or change its behaviour between runs: background networking, component updates,
// sync, first-run UI, crash reporting, pings, translation, optimisation hints and the media
// router (after Puppeteer's and chromedp's defaults), and V8's memory reducer, the garbage
// collections a renderer runs in the half minute after its page went idle (about 50 wake-ups a
// second: an idle browser's largest; it plays no part in a load; BENCHMARKS.md, "Idle
// browsers"). --no-sandbox is added only when running as root. Flags are "--name" or
// "--name=value".
var DefaultFlags = []string{
	"--headless",
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--disable-client-side-phishing-detection",
	"--disable-domain-reliability",
	"--disable-breakpad",
	"--no-pings",
	"--metrics-recording-only",
	"--safebrowsing-disable-auto-update",
	"--disable-background-timer-throttling",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-hang-monitor",
	"--disable-popup-blocking",
	"--disable-prompt-on-repost",
	"--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,NetworkTimeServiceQuerying",
	"--password-store=basic",
	"--use-mock-keychain",
	"--mute-audio",
	"--hide-scrollbars",
	"--js-flags=--no-memory-reducer",
}

// Option configures Launch.
type Option func(*config)

type config struct {
	chrome    string
	netns     string
	protocol  string
	spki      string
	host      string
	hosts     []string       // the server's other site hosts (WithSiteHosts), resolved to ip too
	sitePorts map[string]int // ports of site hosts whose server has a port of its own (WithSitePorts)
	origins   []string       // the pages' other origins (WithOriginHosts), reached on port 443 of their URLs
	ip        string
	port      int
	logger    *slog.Logger
	tempDir   string
	// NetLog and HAR (netlog.go)
	netlogDir, netlogMode string
	creator               string
	// keyLog is the TLS key log file (WithKeyLog); netBenchmarking gives pages
	// chrome.benchmarking (WithNetBenchmarking); quicVersion is the one QUIC version offered
	// (WithQUICVersion); keyUpdateAfter is the packets per QUIC key phase (WithKeyUpdateAfter).
	keyLog, quicVersion string
	netBenchmarking     bool
	keyUpdateAfter      int
	// device is the emulated client device (WithDevice); the zero value is the desktop.
	device device.Device
	// setBudget sets the device group's budget (nil: device.Group.SetBudget); a seam for the
	// test of a budget the kernel does not apply.
	setBudget func(g *device.Group, cpus float64) (periodUs, quotaUs int, err error)
	// launchTimeout bounds Launch's wait for Chromium's answer (WithLaunchTimeout).
	launchTimeout time.Duration
}

func defaultConfig() config {
	return config{protocol: "h2", host: DefaultHost, ip: DefaultIP, logger: slog.New(slog.DiscardHandler),
		launchTimeout: DefaultLaunchTimeout}
}

// WithLaunchTimeout bounds how long Launch (and a relaunch) waits for Chromium to start and
// answer (default DefaultLaunchTimeout): a slow machine, such as a qemu TCG guest, may need
// minutes (pltlab run --launch-timeout). 0 or less keeps the default.
func WithLaunchTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.launchTimeout = d
		}
	}
}

// WithChrome sets the Chromium executable (a path or a name on PATH); see FindChromium for the
// search made when it is not given.
func WithChrome(path string) Option { return func(c *config) { c.chrome = path } }

// WithNetNS launches Chromium inside the named network namespace (`ip netns exec NS ...`), so
// that its traffic goes through the namespace's (emulated) link. DevTools is a pipe, never on the
// link. "" means the current namespace.
func WithNetNS(name string) Option { return func(c *config) { c.netns = name } }

// WithProtocol sets the one protocol this browser is forced to use: "h1", "h2" or "h3" (default
// "h2"). See ProtocolFlags for the switches.
func WithProtocol(p string) Option { return func(c *config) { c.protocol = p } }

// WithSPKI sets the server certificate's pin: base64 of the SHA-256 of its SubjectPublicKeyInfo
// (--ignore-certificate-errors-spki-list). Required: the server's certificate is self-signed.
func WithSPKI(pin string) Option { return func(c *config) { c.spki = pin } }

// WithResolve maps host to ip inside Chromium (--host-resolver-rules="MAP host ip"). host must
// be a hostname (TLS SNI needs one), ip an IP address. Default DefaultHost -> DefaultIP.
func WithResolve(host, ip string) Option { return func(c *config) { c.host, c.ip = host, ip } }

// WithSiteHosts adds the hostnames of the server's other sites (server.NewSites): each resolves
// to WithResolve's ip, is forced onto the browser's protocol like its host, and may be loaded
// (Target.URL). One browser per protocol then serves every page of a link.
func WithSiteHosts(hosts ...string) Option {
	return func(c *config) { c.hosts = append(c.hosts, hosts...) }
}

// WithSitePorts sets the port of each site host (WithSiteHosts) whose server listens on a port
// of its own rather than WithPort's (server.Info.SitePorts: the ngtcp2 stack runs one h3 server
// per site): QUIC is forced on HOST:ITS-PORT, and Load accepts that port for that host.
func WithSitePorts(ports map[string]int) Option {
	return func(c *config) {
		if c.sitePorts == nil {
			c.sitePorts = map[string]int{}
		}
		maps.Copy(c.sitePorts, ports)
	}
}

// WithOriginHosts adds the hostnames of the pages' other origins (pages.Manifest.OriginHosts,
// server.SiteInfo.Origins). A page names them in URLs without a port (https://HOST/PATH, port
// 443), because its files are written before the server's ports are known: each host maps to
// WithResolve's ip AND the browser's port (--host-resolver-rules "MAP HOST IP:PORT", the
// replacement port rule Chromium's host mapping takes), and for h3 QUIC is forced on HOST:443.
// It needs WithPort.
func WithOriginHosts(hosts ...string) Option {
	return func(c *config) {
		for _, h := range hosts {
			if !slices.Contains(c.origins, h) {
				c.origins = append(c.origins, h)
			}
		}
	}
}

// portOf is the port of host: its own (WithSitePorts) or the browser's.
func (c *config) portOf(host string) int {
	if p, ok := c.sitePorts[host]; ok {
		return p
	}
	return c.port
}

// allHosts is the browser's host followed by its site hosts, each once.
func (c *config) allHosts() []string {
	out := []string{c.host}
	for _, h := range c.hosts {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// WithPort sets the server's port. It is required for h3, where QUIC is forced on exactly
// HOST:PORT (--origin-to-force-quic-on); for every protocol Load then refuses URLs on another
// port.
func WithPort(port int) Option { return func(c *config) { c.port = port } }

// WithTempDir puts the temporary user-data-dirs under dir and gives Chromium TMPDIR=dir (on its
// own process only), so that a caller can remove every file of a run at once. "" (the default)
// means os.TempDir() and Chromium's inherited environment.
func WithTempDir(dir string) Option { return func(c *config) { c.tempDir = dir } }

// WithKeyLog makes Chromium write the TLS secrets of its connections, QUIC's included, to path
// in the NSS key log format (--ssl-key-log-file), so that a capture of its traffic can be
// decrypted (tshark's tls.keylog_file). Chromium appends to an existing file. "" (the default)
// logs none.
func WithKeyLog(path string) Option { return func(c *config) { c.keyLog = path } }

// WithNetBenchmarking gives every page Chromium's chrome.benchmarking (--enable-net-benchmarking),
// through which CloseConnections closes the profile's connections and keeps its sessions.
func WithNetBenchmarking() Option { return func(c *config) { c.netBenchmarking = true } }

// WithQUICVersion makes Chromium offer the one QUIC version v (--quic-version, QUICHE's name
// for it: "RFCv1", "RFCv2"); "" (the default) leaves Chromium's own list.
func WithQUICVersion(v string) Option { return func(c *config) { c.quicVersion = v } }

// WithKeyUpdateAfter makes Chromium's QUIC stack (QUICHE) initiate a key update (RFC 9001
// section 6) once it has sent packets 1-RTT packets in one key phase, and again after each
// packets more: QUICHE's FLAGS_quic_key_update_confidentiality_limit, which replaces the AEAD's
// confidentiality limit it otherwise updates at (2^23 packets for AES-GCM), set through the QUIC
// field trial's set_quic_flags parameter (--force-fieldtrials=QUIC/Enabled
// --force-fieldtrial-params=QUIC.Enabled:set_quic_flags/...), the one way Chromium takes a QUICHE
// flag. Verified on Chromium 156: with 100, against a server that never updates, the client's
// key phase flipped twice in a 2 MB download, and never without it. 0 (the default) leaves it.
func WithKeyUpdateAfter(packets int) Option { return func(c *config) { c.keyUpdateAfter = packets } }

// WithLogger sets the logger for launch, relaunch and Chromium's own output (debug level).
// The default discards everything.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		c.logger = cmp.Or(l, c.logger)
	}
}

// validate checks the configuration and returns a one-line error naming the bad value.
func (c *config) validate() error {
	p, err := protocol.Lookup(c.protocol)
	if err != nil {
		return fmt.Errorf("browser: %w", err)
	}
	if c.spki == "" {
		return fmt.Errorf("browser: no SPKI pin (WithSPKI): Chromium would reject the server's self-signed certificate")
	}
	for _, h := range c.allHosts() {
		if h == "" || strings.ContainsAny(h, " ,:/") {
			return fmt.Errorf("browser: bad host %q: a hostname such as %s is needed", h, DefaultHost)
		}
		if _, err := netip.ParseAddr(h); err == nil {
			return fmt.Errorf("browser: host %q is an IP address: TLS needs a hostname (SNI); map a name such as %s to it", h, DefaultHost)
		}
	}
	if _, err := netip.ParseAddr(c.ip); err != nil {
		return fmt.Errorf("browser: bad IP %q for host %s: %w", c.ip, c.host, err)
	}
	if c.port < 0 || c.port > 65535 {
		return fmt.Errorf("browser: bad port %d: accepted 1-65535", c.port)
	}
	for h, port := range c.sitePorts {
		if port < 1 || port > 65535 || !slices.Contains(c.allHosts(), h) {
			return fmt.Errorf("browser: bad site port %s:%d: accepted a site host (WithSiteHosts) and 1-65535", h, port)
		}
	}
	for _, h := range c.origins {
		if h == "" || strings.ContainsAny(h, " ,:/") || slices.Contains(c.allHosts(), h) {
			return fmt.Errorf("browser: bad origin host %q: accepted a hostname that is not a site host", h)
		}
		if _, err := netip.ParseAddr(h); err == nil {
			return fmt.Errorf("browser: origin host %q is an IP address: TLS needs a hostname (SNI)", h)
		}
	}
	if len(c.origins) > 0 && c.port == 0 {
		return fmt.Errorf("browser: origin hosts (WithOriginHosts) need the server's port (WithPort): they are mapped to %s:PORT", c.ip)
	}
	if p.QUICOrigin() && c.port == 0 {
		return fmt.Errorf("browser: %s needs the server's port (WithPort) to force QUIC on %s:PORT", p.Name, c.host)
	}
	return nil
}

// SitesFlags returns the Chromium switches that force protocol p (a protocol.Table name) on the
// server's sites hosts at port, pinned by spki, every host resolved to ip: the table's switches
// (protocol.Protocol.Chromium: h1 = --disable-http2 --disable-quic, with an h1-only ALPN on the
// server; h2 = --disable-quic; h3 = --origin-to-force-quic-on=a.test:PORT,b.test:PORT, each
// host's origin; docs/design.md, "Forcing a protocol"), after
// --host-resolver-rules="MAP a.test ip, MAP b.test ip, MAP * ~NOTFOUND" (every other name fails
// inside Chromium, so it sends no DNS query anywhere: without it Chromium 156 still looks up
// accounts.google.com and update.googleapis.com) and --ignore-certificate-errors-spki-list=spki.
// h3 also needs a --user-data-dir, which Launch always gives. An unknown p adds no protocol
// switches (validate refuses it first).
func SitesFlags(p string, hosts []string, port int, ip, spki string) []string {
	var rules []string
	for _, h := range hosts {
		rules = append(rules, "MAP "+h+" "+ip)
	}
	flags := []string{
		"--host-resolver-rules=" + strings.Join(append(rules, "MAP * ~NOTFOUND"), ", "),
		"--ignore-certificate-errors-spki-list=" + spki,
	}
	if row, err := protocol.Lookup(p); err == nil {
		flags = append(flags, row.ChromiumFlagsFor(hosts, port)...)
	}
	return flags
}

// args returns every switch of the configuration in order: DefaultFlags, --no-sandbox when root,
// the key log, net benchmarking, QUIC version and key update switches when asked, then the
// protocol switches. The user-data-dir is added by Launch.
func (c *config) args() []string {
	args := append([]string(nil), DefaultFlags...)
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	if c.keyLog != "" {
		args = append(args, "--ssl-key-log-file="+c.keyLog)
	}
	if c.netBenchmarking {
		args = append(args, "--enable-net-benchmarking")
	}
	if c.quicVersion != "" {
		args = append(args, "--quic-version="+c.quicVersion)
	}
	if c.keyUpdateAfter > 0 {
		args = append(args, "--force-fieldtrials=QUIC/Enabled",
			"--force-fieldtrial-params=QUIC.Enabled:set_quic_flags/FLAGS_quic_key_update_confidentiality_limit%3D"+strconv.Itoa(c.keyUpdateAfter))
	}
	flags := SitesFlags(c.protocol, c.allHosts(), c.port, c.ip, c.spki)
	if len(c.sitePorts) > 0 || len(c.origins) > 0 {
		if row, err := protocol.Lookup(c.protocol); err == nil {
			var origins []string
			for _, h := range c.allHosts() {
				origins = append(origins, h+":"+strconv.Itoa(c.portOf(h)))
			}
			for _, h := range c.origins {
				origins = append(origins, h+":443")
			}
			flags = append(flags[:2], row.ChromiumFlagsForOrigins(origins)...)
		}
	}
	if len(c.origins) > 0 {
		flags[0] = originRules(flags[0], c.origins, net.JoinHostPort(c.ip, strconv.Itoa(c.port)))
	}
	return append(args, flags...)
}

// originRules adds "MAP HOST IP:PORT" for every origin host to the --host-resolver-rules switch
// rules, before its final "MAP * ~NOTFOUND" (the first rule that matches a host applies).
func originRules(rules string, origins []string, ipPort string) string {
	const last = ", MAP * ~NOTFOUND"
	var add []string
	for _, h := range origins {
		add = append(add, "MAP "+h+" "+ipPort)
	}
	return strings.TrimSuffix(rules, last) + ", " + strings.Join(add, ", ") + last
}

// splitFlag splits "--name=value" into ("name", "value", true) and "--name" into ("name", "", false).
func splitFlag(f string) (name, value string, hasValue bool) {
	f = strings.TrimLeft(f, "-")
	name, value, hasValue = strings.Cut(f, "=")
	return name, value, hasValue
}
