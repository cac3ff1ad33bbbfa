package protocol

import (
	"errors"
	"slices"
	"testing"
)

func TestTableRowsValidate(t *testing.T) {
	shared := 0
	for _, p := range Table {
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if p.SharedPort {
			shared++
		}
	}
	if shared != 1 {
		t.Errorf("%d rows share the QUIC port, want 1", shared)
	}
	if got := Names(); !slices.Equal(got, []string{"h1", "h2", "h3"}) {
		t.Errorf("Names() = %v", got)
	}
}

func TestLookupAndParseList(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		wantErr  string
	}{
		{"all", "h1,h2,h3", []string{"h1", "h2", "h3"}, ""},
		{"spaces", " h3 , h1", []string{"h3", "h1"}, ""},
		{"unknown", "h1,h4", nil, `unknown protocol "h4": accepted h1, h2, h3`},
		{"empty", "", nil, `unknown protocol "": accepted h1, h2, h3`},
		{"twice", "h2,h2", nil, `protocol "h2" given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseList(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ParseList(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParseList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := Lookup("h9"); !errors.Is(err, ErrUnknown) {
		t.Errorf("Lookup(h9) error %v does not wrap ErrUnknown", err)
	}
}

func TestObserved(t *testing.T) {
	for in, want := range map[string]string{
		"http/1.1": "h1", "HTTP/1.1": "h1", "h2": "h2", " h3 ": "h3",
		"h3-29": "h3-29", "hq": "hq", "": "",
	} {
		if got := Observed(in); got != want {
			t.Errorf("Observed(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChromiumFlags(t *testing.T) {
	got := MustLookup("h3").ChromiumFlagsFor([]string{"plt.test"}, 8443)
	if !slices.Equal(got, []string{"--origin-to-force-quic-on=plt.test:8443"}) {
		t.Errorf("h3 flags = %v", got)
	}
	if got := MustLookup("h1").ChromiumFlagsFor([]string{"plt.test"}, 1); !slices.Equal(got, []string{"--disable-http2", "--disable-quic"}) {
		t.Errorf("h1 flags = %v", got)
	}
}

func TestValidateRefuses(t *testing.T) {
	bad := []Protocol{
		{Name: "H2", Version: HTTP2, ALPN: "h2", NextHop: "h2"},
		{Name: "h2x", Version: "h4", ALPN: "h2", NextHop: "h2"},
		{Name: "h2q", Version: HTTP2, Transport: QUIC, ALPN: "h2", NextHop: "h2"},
		{Name: "h3t", Version: HTTP3, Transport: TCP, ALPN: "h3", NextHop: "h3"},
		{Name: "h3tls", Version: HTTP3, Transport: QUIC, ALPN: "h3", NextHop: "h3", TLSVersion: "1.2"},
		{Name: "h2v", Version: HTTP2, ALPN: "h2", NextHop: "h2", TLSVersion: "1.1"},
		{Name: "h2n", Version: HTTP2},
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", p)
		}
	}
}
