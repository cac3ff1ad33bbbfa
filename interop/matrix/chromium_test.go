package matrix

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/browser"
)

// TestParseClients: a client may be any server name or chromium; chromium is no server; bad
// names are refused naming what is accepted.
func TestParseClients(t *testing.T) {
	got, err := ParseClients("quic-go, chromium,ngtcp2,quic-go@v0.40.1")
	if err != nil || !slices.Equal(got, []string{"quic-go", "chromium", "ngtcp2", "quic-go@v0.40.1"}) {
		t.Fatalf("%v, %v", got, err)
	}
	for in, want := range map[string]string{
		"firefox":           `"firefox": accepted quic-go, ngtcp2, chromium, or quic-go@vX.Y.Z`,
		"chromium,chromium": `"chromium": given twice`,
		"quic-go@v0.32.0":   `bad quic-go version "v0.32.0"`,
	} {
		if _, err := ParseClients(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := ParseServers("quic-go,chromium"); err == nil || !strings.Contains(err.Error(), `"chromium": accepted quic-go, ngtcp2, or`) {
		t.Errorf("chromium as a server: %v", err)
	}
}

// TestChromiumNotSupported: with Chromium as the client every case runs (v2 with
// --quic-version=RFCv2, keyupdate with the key update flag) but chacha20 (BoringSSL's TLS 1.3
// suites cannot be narrowed), connectionmigration (nothing starts a migration) and v2 against
// ngtcp2, whose v2 is not RFC 9369's; Chromium is never a server.
func TestChromiumNotSupported(t *testing.T) {
	chromium, qg, ng := Peer{Name: Chromium}, Peer{Name: QUICGo}, Peer{Name: Ngtcp2}
	want := map[string]string{"chacha20": NoChaCha20Chromium, "connectionmigration": NoMigrateChromium}
	for _, c := range Exchanges {
		if why := notSupported(c, chromium, qg); why != want[c.Name] {
			t.Errorf("%s: unsupported (%s), want %q", c.Name, why, want[c.Name])
		}
		if why := notSupported(c, chromium, ng); (why != "") != (c.Name == "v2" || want[c.Name] != "") {
			t.Errorf("%s against ngtcp2: %q", c.Name, why)
		}
		if why := notSupported(c, qg, chromium); why != "Chromium is a client only" {
			t.Errorf("%s with Chromium as the server: %q", c.Name, why)
		}
	}
}

// TestWorstRound: a file is saved whole only when every round fetched it whole; the first round
// that did not shows, and a round without a body leaves no file.
func TestWorstRound(t *testing.T) {
	want, short, other := []byte("abcdef"), []byte("abc"), []byte("abcdeX")
	for _, tt := range []struct {
		name   string
		bodies [][]byte
		got    []byte
	}{
		{"one round whole", [][]byte{want}, want},
		{"two rounds whole", [][]byte{want, slices.Clone(want)}, want},
		{"no rounds", nil, nil},
		{"second round failed", [][]byte{want, nil}, nil},
		{"first round failed", [][]byte{nil, want}, nil},
		{"first round short", [][]byte{short, want}, short},
		{"second round other bytes", [][]byte{want, other}, other},
		{"both wrong: the first shows", [][]byte{short, other}, short},
		{"empty body", [][]byte{{}}, []byte{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := worstRound(want, tt.bodies)
			if (got == nil) != (tt.got == nil) || !bytes.Equal(got, tt.got) {
				t.Errorf("worstRound = %q, want %q", got, tt.got)
			}
		})
	}
}

// TestSaveRounds: what the rounds fetched lands in the run's directory as checkFiles reads it,
// ChromiumPage is served beside the files, and the pin Chromium gets is the certificate's.
func TestSaveRounds(t *testing.T) {
	d, names, err := prepare(t.TempDir(), []int{100, 200}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.www, ChromiumPage)); err != nil || !strings.Contains(string(b), "<!doctype html>") {
		t.Errorf("%s: %q, %v", ChromiumPage, b, err)
	}
	one, _ := os.ReadFile(filepath.Join(d.www, names[0]))
	two, _ := os.ReadFile(filepath.Join(d.www, names[1]))
	rounds := [][]browser.Fetched{
		{{URL: "u1", Status: 200, Body: one}, {URL: "u2", Status: 200, Body: two}},
		{{URL: "u1", Status: 200, Body: one}, {URL: "u2", Err: "TypeError: Failed to fetch"}},
	}
	if err := saveRounds(d, d.run(1), names, rounds); err != nil {
		t.Fatal(err)
	}
	files := checkFiles(d, names, 1)
	if len(files) != 2 || !files[0].Match || files[0].Got != 100 || files[1].Match || files[1].Got != -1 {
		t.Errorf("files %+v: want 1.bin whole, 2.bin missing (its second round failed)", files)
	}
	pin, err := certPin(d.cert)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.cert)
	blk, _ := pem.Decode(b)
	cert, _ := x509.ParseCertificate(blk.Bytes)
	if pin != browser.SPKIPin(cert) || len(pin) != 44 {
		t.Errorf("pin %q", pin)
	}
	if _, err := certPin(filepath.Join(d.root, "nothing.pem")); err == nil {
		t.Error("pin of a missing certificate: no error")
	}
}

// TestFetchSummary: a round's summary names each file with its status, protocol and size, or
// its error.
func TestFetchSummary(t *testing.T) {
	got := fetchSummary([]browser.Fetched{
		{URL: "https://plt.test:4433/1.bin", Status: 200, Protocol: "h3", Body: make([]byte, 10)},
		{URL: "https://plt.test:4433/2.bin", Status: 404, Err: "HTTP 404"},
	})
	if want := "1.bin 200 h3 10 bytes, 2.bin HTTP 404"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
