package quicgo

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckVersion: releases v0.33.0..v0.66.x are accepted; anything else is refused naming the
// value and the range, before any network.
func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"v0.33.0", "v0.40.1", "v0.66.0", "v0.66.3"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("CheckVersion(%q) = %v", v, err)
		}
	}
	for _, v := range []string{"", "0.40.1", "v0.32.9", "v0.67.0", "v1.0.0", "v0.40", "v0.40.1-rc1", "latest", "v0.40.1;rm"} {
		err := CheckVersion(v)
		if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "accepted a release v0.33.0 to v0.66.x") || !strings.Contains(err.Error(), `"`+v+`"`) {
			t.Errorf("CheckVersion(%q) = %v", v, err)
		}
	}
}

// TestEras: every accepted release has exactly one era, the boundaries fall where quic-go
// renamed the API (v0.43.0 QuicConfig -> QUICConfig, v0.48.0 RoundTripper -> Transport), and
// each era's source names its fields.
func TestEras(t *testing.T) {
	for v, want := range map[string]string{"v0.33.0": "v0.33-v0.42", "v0.42.0": "v0.33-v0.42", "v0.43.0": "v0.43-v0.47",
		"v0.47.0": "v0.43-v0.47", "v0.48.0": "v0.48-v0.66", "v0.66.0": "v0.48-v0.66"} {
		if e, ok := EraOf(v); !ok || e.Name != want {
			t.Errorf("EraOf(%s) = %q, %v; want %s", v, e.Name, ok, want)
		}
	}
	if _, ok := EraOf("v0.32.0"); ok {
		t.Error("v0.32.0 has an era")
	}
	for _, e := range Eras {
		src, err := e.Source()
		if err != nil {
			t.Fatal(err)
		}
		s := string(src)
		if !strings.Contains(s, "http3."+e.ClientType+"{") || strings.Count(s, e.ConfigField+": qc") != 2 || strings.Contains(s, "{{") {
			t.Errorf("era %s source does not use %s and %s", e.Name, e.ClientType, e.ConfigField)
		}
	}
}

// TestNewestPatch: the newest linux-amd64 patch of a Go minor is picked from the toolchain
// module's version list.
func TestNewestPatch(t *testing.T) {
	list := "golang.org/toolchain v0.0.1-go1.20.1.linux-amd64 v0.0.1-go1.20.14.linux-amd64 v0.0.1-go1.20.14.darwin-arm64 v0.0.1-go1.20.9.linux-amd64 v0.0.1-go1.21.13.linux-amd64 v0.0.1-go1.20rc1.linux-amd64"
	if got := newestPatch(list, 20); got != "go1.20.14" {
		t.Errorf("newestPatch(20) = %q, want go1.20.14", got)
	}
	if got := newestPatch(list, 19); got != "" {
		t.Errorf("newestPatch(19) = %q, want none", got)
	}
}

// TestToolchainsFromQtls: a release that requires qtls forks is tried with the local Go, then
// the Go release of its newest fork; one without is tried with the local Go alone.
func TestToolchainsFromQtls(t *testing.T) {
	o := Options{Go: "false"} // the toolchain list cannot be read: only "local"
	got, _ := o.toolchains(t.Context(), t.TempDir(), []byte("require github.com/quic-go/qtls-go1-20 v0.1.1\n"))
	if len(got) != 1 || got[0] != "local" {
		t.Errorf("toolchains without a list = %v", got)
	}
	if m := qtlsRe.FindAllSubmatch([]byte("github.com/quic-go/qtls-go1-19 v0.2.1\ngithub.com/quic-go/qtls-go1-20 v0.1.1"), -1); len(m) != 2 || string(m[1][1]) != "20" {
		t.Errorf("qtls forks found: %q", m)
	}
}
