package interop

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// RecordVersion is the schema version of Record ("v").
const RecordVersion = 1

// RecordKind is Record's "kind": one interop case against one client and server.
const RecordKind = "interop_case"

// ProbeClient names this package's raw probe client in records.
const ProbeClient = "pltlab-probe"

// ProbeVersion describes the probe client's version: pltlab's build (given) and the Go
// toolchain whose crypto/tls wrote the ClientHello.
func ProbeVersion(pltlab string) string {
	return fmt.Sprintf("%s %s (crypto/tls of %s)", ProbeClient, pltlab, runtime.Version())
}

// Record is one JSON line of `pltlab interop`: a case's outcome for one client against one
// server, each named with the exact version that ran, and the evidence the verdict rests on.
type Record struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	// Time is when the case started (RFC 3339, UTC).
	Time string `json:"time"`
	Case string `json:"case"`
	// Rule is the RFC rule the case checks (Case.Rule).
	Rule   string `json:"rule"`
	Client string `json:"client"`
	Server string `json:"server"`
	// Versions maps "client" and "server" to the versions that ran, as read from them.
	Versions map[string]string `json:"versions"`
	// Target is the server's UDP address; Link the path to it ("loopback").
	Target     string      `json:"target"`
	Link       string      `json:"link"`
	Outcome    Outcome     `json:"outcome"`
	Reason     string      `json:"reason"`
	DurationMS float64     `json:"duration_ms"`
	Observed   Observation `json:"evidence"`
	// Build is the provenance of a server built from a release for the interop matrix (a
	// quic-go release's endpoint); nil for a server the project links or a system package.
	Build *Build `json:"build,omitempty"`
	// ClientBuild is the same for a client built from a release (exchange cases).
	ClientBuild *Build `json:"client_build,omitempty"`
	// Rerun, on a run made again outside a schedule to confirm what an earlier run of the same
	// cell suggested (the study evolution's re-run of a suspected regression), says what it
	// confirms; empty for a scheduled run.
	Rerun string `json:"rerun,omitempty"`
}

// Build is how a probed server's program was built: the release, its API era, the Go
// toolchain, the module's go.sum hash and the binary's SHA-256 (hex), as interop/quicgo
// recorded them beside the binary.
type Build struct {
	Release      string `json:"release"`
	Era          string `json:"era"`
	Toolchain    string `json:"toolchain"`
	Sum          string `json:"sum"`
	BinarySHA256 string `json:"binary_sha256"`
}

// NewRecord makes the record of result r of case c.
func NewRecord(r Result, c Case, client, clientVersion, server, serverVersion, target, link string) Record {
	return Record{
		V: RecordVersion, Kind: RecordKind, Time: r.Start.UTC().Format(time.RFC3339),
		Case: r.Case, Rule: c.Rule, Client: client, Server: server,
		Versions: map[string]string{"client": clientVersion, "server": serverVersion},
		Target:   target, Link: link, Outcome: r.Outcome, Reason: r.Reason,
		DurationMS: float64(r.Duration.Microseconds()) / 1000, Observed: r.Observed,
	}
}

// WriteTable writes records as a table for people: case, client, server, outcome, what went
// each way (a probe's bytes sent and received; an exchange case's datagrams up and down, the
// link's drops after a "+", the datagrams it corrupted in parentheses) and the reason.
func WriteTable(w io.Writer, recs []Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tclient\tserver\toutcome\tsent\treceived\treason")
	for _, r := range recs {
		sent, recv := fmt.Sprintf("%d B", r.Observed.BytesSent), fmt.Sprintf("%d B", r.Observed.BytesReceived)
		if x := r.Observed.Wire; x != nil {
			sent = fmt.Sprintf("%d dgr", x.Datagrams["up"]) + drops(x.Datagrams["up-dropped"]) + corrupted(x.Corrupted["up"])
			recv = fmt.Sprintf("%d dgr", x.Datagrams["down"]) + drops(x.Datagrams["down-dropped"]) + corrupted(x.Corrupted["down"])
		} else if r.Link != "loopback" {
			sent, recv = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Case, r.Client, r.Server, strings.ToUpper(string(r.Outcome)), sent, recv, r.Reason)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		for _, role := range []string{"client", "server"} {
			name := map[string]string{"client": r.Client, "server": r.Server}[role]
			if v := r.Versions[role]; !seen[name+v] {
				seen[name+v] = true
				fmt.Fprintf(tw, "\n%s: %s", name, v)
			}
		}
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}

// corrupted writes n datagrams corrupted by the link as " (n corrupted)" (nothing for none).
func corrupted(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d corrupted)", n)
}

// drops writes n datagrams dropped by the link as "+n dropped" (nothing for none).
func drops(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" +%d dropped", n)
}
