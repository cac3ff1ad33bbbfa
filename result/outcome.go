package result

import (
	"regexp"
	"slices"
	"strings"
)

// Outcome classifies a page load for statistics. Every package that counts loads (the run's
// summary and every report table) uses Classify, so their counts agree.
type Outcome int

// The outcomes of a page load.
const (
	// OutcomeValid is a verified, completed load: its PLT is a measurement.
	OutcomeValid Outcome = iota
	// OutcomeTimedOut is a load that hit its deadline: censored, PLT >= the deadline.
	OutcomeTimedOut
	// OutcomeNetworkFailed is a load that the network made fail before the deadline (a handshake
	// timeout, a reset or closed connection, a QUIC protocol error): a failed measurement of its
	// protocol, censored at the deadline like a timeout (docs/design.md, "Which failures are
	// censored, which invalid, and why").
	OutcomeNetworkFailed
	// OutcomeInvalid is a load that measured something else than was asked (wrong protocol,
	// missing or short objects not explained by the network, a crashed browser): excluded.
	OutcomeInvalid
	// OutcomeEmulatorLate is a load during which the userspace emulator released a packet later
	// than its lateness bound after its scheduled time (Emulator.Late): the link was not the
	// one configured for a moment, so the load is no measurement of it, whatever else it shows.
	// The runner makes it once more (Record.Attempt 2); it is counted and named, never pooled.
	OutcomeEmulatorLate
)

// String returns "valid", "timed out", "network failure", "invalid" or "emulator late".
func (o Outcome) String() string {
	return [...]string{"valid", "timed out", "network failure", "invalid", "emulator late"}[o]
}

// NetworkErrors are the Chromium net error names (net/base/net_error_list.h) that mean the
// network, not the harness or the protocol forcing, ended a load: handshakes that timed out or
// were cut, connections reset, closed or timed out, QUIC and HTTP/2 sessions that failed.
// ERR_CONNECTION_REFUSED is not among them: nothing on the emulated link refuses a connection,
// a refusal means no server listened (a harness fault).
var NetworkErrors = []string{
	"ERR_QUIC_PROTOCOL_ERROR", "ERR_QUIC_HANDSHAKE_FAILED", "ERR_CONNECTION_RESET",
	"ERR_CONNECTION_CLOSED", "ERR_CONNECTION_ABORTED", "ERR_CONNECTION_TIMED_OUT",
	"ERR_CONNECTION_FAILED", "ERR_TIMED_OUT", "ERR_EMPTY_RESPONSE", "ERR_SSL_PROTOCOL_ERROR",
	"ERR_HTTP2_PROTOCOL_ERROR", "ERR_HTTP2_PING_FAILED", "ERR_HTTP2_SERVER_REFUSED_STREAM",
	"ERR_NETWORK_IO_SUSPENDED", "ERR_INTERNET_DISCONNECTED", "ERR_ADDRESS_UNREACHABLE",
}

var netErrRE = regexp.MustCompile(`net::(ERR_[A-Z0-9_]+)`)

// NetworkError returns the Chromium net error (e.g. "ERR_QUIC_PROTOCOL_ERROR") of an invalid
// load that the network made fail, or "" when the load did not fail that way. It reads the
// invalid_reason the browser package writes ("navigation failed: net::ERR_..." or
// "object /img/0001.jpg: failed: net::ERR_..."), so files written before it existed are
// classified too.
func NetworkError(r *Record) string {
	if r.Valid || r.InvalidReason == "" || strings.Contains(r.InvalidReason, ", requested ") {
		return "" // a protocol mismatch is invalid whatever else went wrong
	}
	for _, m := range netErrRE.FindAllStringSubmatch(r.InvalidReason, -1) {
		if slices.Contains(NetworkErrors, m[1]) {
			return m[1]
		}
	}
	return ""
}

// Classify returns the outcome of the page load r: emulator late, timed out, valid, failed by
// the network, or invalid, in that order of precedence (a load the emulator was late in measured
// another link, whatever its own outcome).
func Classify(r *Record) Outcome {
	switch {
	case r.Emulator.Late():
		return OutcomeEmulatorLate
	case r.TimedOut:
		return OutcomeTimedOut
	case r.Valid:
		return OutcomeValid
	case NetworkError(r) != "":
		return OutcomeNetworkFailed
	}
	return OutcomeInvalid
}
