package browser

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestProtocolFlags(t *testing.T) {
	const pin = "AAAAbase64pin="
	common := []string{"--host-resolver-rules=MAP plt.test 127.0.0.1, MAP * ~NOTFOUND", "--ignore-certificate-errors-spki-list=" + pin}
	tests := []struct {
		proto string
		want  []string
	}{
		{"h1", append(slices.Clone(common), "--disable-http2", "--disable-quic")},
		{"h2", append(slices.Clone(common), "--disable-quic")},
		{"h3", append(slices.Clone(common), "--origin-to-force-quic-on=plt.test:8443")},
	}
	for _, tc := range tests {
		t.Run(tc.proto, func(t *testing.T) {
			got := SitesFlags(tc.proto, []string{"plt.test"}, 8443, "127.0.0.1", pin)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SitesFlags(%s) =\n  %q\nwant\n  %q", tc.proto, got, tc.want)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	c := defaultConfig()
	c.protocol, c.spki, c.port = "h3", "pin", 443
	args := c.args()
	for _, want := range []string{"--headless", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--origin-to-force-quic-on=plt.test:443"} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %s: %q", want, args)
		}
	}
	if root := os.Geteuid() == 0; slices.Contains(args, "--no-sandbox") != root {
		t.Errorf("--no-sandbox present=%v, want only as root (root=%v)", !root, root)
	}
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--user-data-dir") }) {
		t.Errorf("args carry a user-data-dir; Launch adds its own temporary one")
	}
}

func TestSplitFlag(t *testing.T) {
	tests := []struct{ in, name, value string }{
		{"--headless", "headless", ""},
		{"--host-resolver-rules=MAP plt.test 10.0.0.1", "host-resolver-rules", "MAP plt.test 10.0.0.1"},
		{"--disable-features=A,B", "disable-features", "A,B"},
	}
	for _, tc := range tests {
		name, value, has := splitFlag(tc.in)
		if name != tc.name || value != tc.value || has != (tc.value != "") {
			t.Errorf("splitFlag(%q) = %q, %q, %v", tc.in, name, value, has)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string // substring of the error; "" = valid
	}{
		{"h2 defaults", []Option{WithSPKI("pin")}, ""},
		{"h3 with port", []Option{WithProtocol("h3"), WithSPKI("pin"), WithPort(8443)}, ""},
		{"h3 without port", []Option{WithProtocol("h3"), WithSPKI("pin")}, "WithPort"},
		{"bad protocol", []Option{WithProtocol("quic"), WithSPKI("pin")}, `unknown protocol "quic": accepted h1, h2, h3`},
		{"no pin", []Option{WithProtocol("h1")}, "no SPKI pin"},
		{"bare IP host", []Option{WithSPKI("pin"), WithResolve("127.0.0.1", "127.0.0.1")}, "TLS needs a hostname"},
		{"bad IP", []Option{WithSPKI("pin"), WithResolve("plt.test", "localhost")}, `bad IP "localhost"`},
		{"bad port", []Option{WithSPKI("pin"), WithPort(70000)}, "bad port 70000"},
		{"namespace ok", []Option{WithSPKI("pin"), WithNetNS("pltlab-c"), WithResolve("plt.test", "100.64.0.1")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := defaultConfig()
			for _, o := range tc.opts {
				o(&c)
			}
			err := c.validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("validate = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestFindChromium(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "chromium")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("explicit path", func(t *testing.T) {
		if got, err := FindChromium(fake); err != nil || got != fake {
			t.Errorf("FindChromium(%q) = %q, %v", fake, got, err)
		}
	})
	t.Run("explicit missing", func(t *testing.T) {
		_, err := FindChromium(filepath.Join(dir, "nope"))
		if !errors.Is(err, ErrNoChromium) || !strings.Contains(err.Error(), "apt-get install -y chromium") {
			t.Errorf("err = %v, want ErrNoChromium with the install command", err)
		}
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv(EnvChrome, fake)
		if got, err := FindChromium(""); err != nil || got != fake {
			t.Errorf("FindChromium with $%s = %q, %v", EnvChrome, got, err)
		}
	})
	t.Run("on PATH", func(t *testing.T) {
		t.Setenv(EnvChrome, "")
		t.Setenv("PATH", dir)
		if got, err := FindChromium(""); err != nil || got != fake {
			t.Errorf("FindChromium on PATH = %q, %v", got, err)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Setenv(EnvChrome, "")
		t.Setenv("PATH", t.TempDir())
		if _, err := FindChromium(""); !errors.Is(err, ErrNoChromium) {
			t.Errorf("err = %v, want ErrNoChromium", err)
		}
	})
}

func TestLaunchFailure(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "chromium")
	script := "#!/bin/sh\necho 'error while loading shared libraries: libfoo.so' >&2\nexit 127\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Launch(t.Context(), WithChrome(fake), WithSPKI("pin"))
	if err == nil || !strings.Contains(err.Error(), "libfoo.so") {
		t.Fatalf("Launch = %v, want an error quoting Chromium's output", err)
	}
	if _, err := Launch(t.Context(), WithChrome(filepath.Join(t.TempDir(), "none")), WithSPKI("pin")); !errors.Is(err, ErrNoChromium) {
		t.Fatalf("Launch without Chromium = %v, want ErrNoChromium", err)
	}
}

// TestLaunchTimeout: a Chromium that never answers fails Launch after WithLaunchTimeout's
// bound, named in the error; 0 keeps DefaultLaunchTimeout.
func TestLaunchTimeout(t *testing.T) {
	c := defaultConfig()
	WithLaunchTimeout(0)(&c)
	if c.launchTimeout != DefaultLaunchTimeout {
		t.Errorf("WithLaunchTimeout(0): %v, want DefaultLaunchTimeout", c.launchTimeout)
	}
	mute := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(mute, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Launch(t.Context(), WithChrome(mute), WithSPKI("pin"), WithLaunchTimeout(300*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("Launch of a Chromium that never answers = %v, want no answer within 300ms", err)
	}
}

// TestExchangeClientFlags: the key log, net benchmarking, QUIC version and key update options
// add their switches only when asked, before the protocol switches; CloseConnections refuses a browser
// launched without net benchmarking before it touches Chromium.
func TestExchangeClientFlags(t *testing.T) {
	c := defaultConfig()
	c.protocol, c.spki, c.port = "h3", "pin", 443
	for _, a := range c.args() {
		if strings.HasPrefix(a, "--ssl-key-log-file") || a == "--enable-net-benchmarking" || strings.HasPrefix(a, "--quic-version") || strings.HasPrefix(a, "--force-fieldtrial") {
			t.Errorf("unasked switch %s", a)
		}
	}
	for _, o := range []Option{WithKeyLog("/tmp/k.log"), WithNetBenchmarking(), WithQUICVersion("RFCv2"), WithKeyUpdateAfter(100)} {
		o(&c)
	}
	args := c.args()
	force := slices.Index(args, "--origin-to-force-quic-on=plt.test:443")
	for _, want := range []string{"--ssl-key-log-file=/tmp/k.log", "--enable-net-benchmarking", "--quic-version=RFCv2", "--force-fieldtrials=QUIC/Enabled",
		"--force-fieldtrial-params=QUIC.Enabled:set_quic_flags/FLAGS_quic_key_update_confidentiality_limit%3D100"} {
		if i := slices.Index(args, want); i < 0 || i > force {
			t.Errorf("%s at %d, want it before the protocol switches (%d): %q", want, i, force, args)
		}
	}
	b := &Browser{cfg: defaultConfig()}
	if err := b.CloseConnections(t.Context()); err == nil || !strings.Contains(err.Error(), "WithNetBenchmarking") {
		t.Errorf("CloseConnections without net benchmarking: %v", err)
	}
}
