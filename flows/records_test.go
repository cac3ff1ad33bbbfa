package flows

import (
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// TestFillStarvedFlowInvalid checks that a flow that connected but read no body byte is not
// valid, is marked starved, and has no observed protocol; and that a flow that read bytes over a
// checked ALPN gets its observed protocol and TLS version.
func TestFillStarvedFlowInvalid(t *testing.T) {
	spec := Spec{Protocol: "h2", CC: "cubic", Duration: 5 * time.Second}
	tr := &transfer{alpn: "h2", tlsVersion: "1.3", cc: "cubic"}
	starved := &flowRun{spec: spec, tr: tr}
	rec := &result.Record{Valid: true, Flow: &result.Flow{}}
	starved.fill(rec)
	if rec.Valid || !rec.Starved || rec.ObservedProtocol != "" || !strings.HasPrefix(rec.InvalidReason, "starved") {
		t.Errorf("starved flow: valid %v starved %v observed %q reason %q; want invalid, starved, no protocol",
			rec.Valid, rec.Starved, rec.ObservedProtocol, rec.InvalidReason)
	}
	fed := &flowRun{spec: spec, tr: tr, bytes: 1 << 20}
	rec = &result.Record{Valid: true, Flow: &result.Flow{}}
	fed.fill(rec)
	if !rec.Valid || rec.Starved || rec.ObservedProtocol != "h2" || rec.TLSVersion != "1.3" {
		t.Errorf("fed flow: valid %v (%s) starved %v observed %q tls %q; want valid h2 1.3",
			rec.Valid, rec.InvalidReason, rec.Starved, rec.ObservedProtocol, rec.TLSVersion)
	}
	noTLS := &flowRun{spec: spec, tr: &transfer{alpn: "h2", cc: "cubic"}, bytes: 10}
	rec = &result.Record{Valid: true, Flow: &result.Flow{}}
	noTLS.fill(rec)
	if rec.Valid {
		t.Errorf("flow without a TLS version is valid")
	}
}

// TestCheckSize checks the bound on a run's series: a million hours of one flow is refused
// with the accepted maximum named, the default 30 s run passes, and a coarser bin admits more.
func TestCheckSize(t *testing.T) {
	err := CheckSize(1, 1000000*time.Hour, DefaultBin)
	if err == nil || !strings.Contains(err.Error(), "accepted at most") {
		t.Fatalf("CheckSize(1, 1e6 h, 100 ms) = %v, want a refusal naming the maximum", err)
	}
	if err := CheckSize(50, DefaultDuration, DefaultBin); err != nil {
		t.Fatalf("default run refused: %v", err)
	}
	if err := CheckSize(1, 100*time.Hour, DefaultBin); err != nil {
		t.Fatalf("100 h of one flow refused: %v", err)
	}
	if err := CheckSize(50, 100*time.Hour, DefaultBin); err == nil {
		t.Fatal("100 h of 50 flows at 100 ms accepted")
	}
	if _, err := Run(t.Context(), nil, nil, Config{Flows: []Spec{{Protocol: "h1", CC: "cubic"}}, Duration: 1000000 * time.Hour}); err == nil {
		t.Fatal("Run accepted a million hours")
	}
}
