package studies

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestCarlucciDifferencesFromRecords checks that the testbed facts in the report come from the
// records, not from constants.
func TestCarlucciDifferencesFromRecords(t *testing.T) {
	env := &result.Env{CPUs: 64, Kernel: "9.9.9-test", QUIC: "quic-go v9.9.9"}
	recs := []*result.Record{
		{Protocol: "h1", CC: "reno", TLSVersion: "1.3", Browser: "Chromium/999.0", Env: env},
		{Protocol: "h3", CC: "quic-go v9.9.9 NewReno", TLSVersion: "1.3", Browser: "Chromium/999.0", Env: env},
		{Kind: result.KindLinkCheck, Protocol: "h2", CC: "bbr"},
	}
	got := strings.Join(CarlucciDifferences(recs), "\n")
	for _, want := range []string{"quic-go v9.9.9 NewReno", "recorded): reno", "TLS over TCP (recorded): 1.3", "Chromium/999.0", "64 logical CPUs", "9.9.9-test"} {
		if !strings.Contains(got, want) {
			t.Errorf("differences lack %q:\n%s", want, got)
		}
	}
	for _, typed := range []string{"v0.65", "2-core", "bbr"} {
		if strings.Contains(got, typed) {
			t.Errorf("differences say %q, which no record says:\n%s", typed, got)
		}
	}
	if none := strings.Join(CarlucciDifferences(nil), "\n"); !strings.Contains(none, "not recorded") {
		t.Errorf("no records: want 'not recorded' facts:\n%s", none)
	}
}
