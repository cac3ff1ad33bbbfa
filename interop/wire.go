package interop

// Wire is what an exchange case (a real client and server through an emulated link, package
// interop/matrix) read from the link's capture, decrypted with both endpoints' TLS key logs:
// the facts its verdict rests on, per direction ("up": client to server, "down": server to
// client), counting only the datagrams the link delivered unless a name says dropped.
type Wire struct {
	// Datagrams counts the datagrams per direction: "up", "down", and those the link's loss
	// dropped, "up-dropped" and "down-dropped".
	Datagrams map[string]int `json:"datagrams"`
	// Packets counts the QUIC packets per direction and type ("up initial", "down 1rtt",
	// "up 0rtt", "down retry").
	Packets map[string]int `json:"packets"`
	// Versions are the versions of the long headers seen, in hex ("0x00000001").
	Versions []string `json:"versions"`
	// Connections is how many connections the client opened: distinct source connection IDs
	// in its Initial packets (a Retry changes the destination ID, not the source).
	Connections int `json:"connections"`
	// Handshakes counts the connections whose handshake completed on the wire: the client's
	// 1-RTT packets (sent only once it has the server's Finished) reached the server, and the
	// server's 1-RTT packets reached the client after them.
	Handshakes int `json:"handshakes"`
	// HandshakeDone counts the HANDSHAKE_DONE frames the server's delivered packets carried.
	HandshakeDone int `json:"handshake_done"`
	// RetryToken is the token of the server's first Retry (hex) and TokenEchoed whether the
	// client's next Initial carried that token.
	RetryToken  string `json:"retry_token,omitempty"`
	TokenEchoed bool   `json:"token_echoed,omitempty"`
	// KeyPhaseFlips counts the changes of the key phase bit between consecutive decrypted
	// 1-RTT packets, per direction.
	KeyPhaseFlips map[string]int `json:"key_phase_flips,omitempty"`
	// KeyUpdateFirst is the direction whose packets flipped the key phase first ("up": the
	// client initiated the key update), "" when none flipped.
	KeyUpdateFirst string `json:"key_update_first,omitempty"`
	// Resumed is, per connection in order, whether the server's ServerHello carried
	// pre_shared_key with no Certificate in that connection.
	Resumed []bool `json:"resumed,omitempty"`
	// EarlyData is, per connection, whether the server's EncryptedExtensions carried early_data
	// (it accepted 0-RTT).
	EarlyData []bool `json:"early_data,omitempty"`
	// ALPN is the protocol the server chose in its EncryptedExtensions.
	ALPN string `json:"alpn,omitempty"`
	// Streams counts the distinct stream IDs of delivered STREAM frames per direction and kind
	// ("down bidi", "up uni").
	Streams map[string]int `json:"streams,omitempty"`
	// Undecrypted counts the packets the capture's dissector could not decrypt.
	Undecrypted int `json:"undecrypted,omitempty"`
	// Corrupted counts the datagrams the link corrupted per direction ("up", "down"): one bit
	// of the UDP payload flipped, the checksum kept valid (corrupt=P%). Read from the
	// emulator's counters over the exchange, not from the capture (which holds the corrupted
	// datagrams as delivered).
	Corrupted map[string]int `json:"corrupted,omitempty"`
	// Bleached counts the datagrams per direction ("up", "down") whose IP ECN field the link
	// cleared to Not-ECT (bleach=ecn): from the emulator's counters over the exchange, as the
	// capture holds the datagrams as delivered, unmarked.
	Bleached map[string]int `json:"bleached,omitempty"`
	// Rebinds counts the link NAT's rebindings (rebind=) during the exchange and Unbound the
	// server datagrams it dropped, addressed to a binding no longer in force; from the
	// emulator's counters.
	Rebinds int `json:"rebinds,omitempty"`
	Unbound int `json:"unbound,omitempty"`
	// ClientHellos counts the client's delivered datagrams whose Initial packet carried its
	// ClientHello (a CRYPTO frame at offset 0, no Handshake packet beside it): its first and
	// each retransmission, sent again when its probe timeout fired before the server's answer
	// came (RFC 9002 section 6.2.4).
	ClientHellos int `json:"client_hellos,omitempty"`
	// OfferedSuites are the TLS cipher suites (hex, "0x1303") of the client's ClientHellos,
	// distinct, in order; ChosenSuites the suite of each connection's ServerHello, in order
	// (RFC 8446 sections 4.1.2, 4.1.3 and B.4).
	OfferedSuites []string `json:"offered_suites,omitempty"`
	ChosenSuites  []string `json:"chosen_suites,omitempty"`
	// ECN counts the delivered datagrams per direction and ECN codepoint of their IP header
	// (RFC 3168 section 5): "up ect0", "up ect1", "up ce", "up not-ect", and the same "down".
	ECN map[string]int `json:"ecn,omitempty"`
	// ACKECN counts the ACK frames with ECN counts (frame type 0x03, RFC 9000 section 19.3.2)
	// each direction's delivered packets carried ("up": the client's ACKs).
	ACKECN map[string]int `json:"ack_ecn,omitempty"`
	// Gap is the longest time in which the link delivered no datagram either way; nil with
	// fewer than two datagrams delivered.
	Gap *Gap `json:"gap,omitempty"`
	// TransferMS is the time from the client's first datagram the link delivered to the last
	// server datagram it delivered that carried a STREAM frame of a request stream (a
	// client-initiated bidirectional one, RFC 9000 section 2.1): the fetch as the capture saw
	// it, in ms (the capture stamps a datagram as it leaves the link); 0 when there was none.
	TransferMS float64 `json:"transfer_ms,omitempty"`
	// Paths is what the capture shows of the client's paths (rebindings and migrations, RFC
	// 9000 section 9); nil when the client used one address and port and no path was probed.
	Paths *Paths `json:"paths,omitempty"`
	// MigrationDisabled is whether the server's transport parameters (in its
	// EncryptedExtensions, decrypted) carried disable_active_migration (RFC 9000 section 18.2):
	// the client may then not migrate on purpose to another address.
	MigrationDisabled bool `json:"migration_disabled,omitempty"`
}

// Paths is the client's network paths as the server saw them, read from the capture (the link's
// NAT, rebind=, sits at the client's edge, so the capture holds the server's view): the
// Interop Runner's rebind-port, rebind-addr and connectionmigration evidence. Addresses are
// "IPv4:port"; only the datagrams the link delivered are read.
type Paths struct {
	// Destinations are the distinct addresses the server's datagrams were sent to, in order of
	// first use; Migrations counts the changes of destination between consecutive ones.
	Destinations []string `json:"destinations"`
	Migrations   int      `json:"migrations"`
	// Unchallenged lists each change of destination whose first server datagram carried no
	// PATH_CHALLENGE frame (RFC 9000 sections 8.2.1 and 9.3): "ADDR at T s".
	Unchallenged []string `json:"unchallenged,omitempty"`
	// Challenges are the distinct PATH_CHALLENGE data the server sent (hex), Unanswered those
	// that no PATH_RESPONSE from the client echoed (RFC 9000 section 8.2.2).
	Challenges []string `json:"challenges,omitempty"`
	Unanswered []string `json:"unanswered,omitempty"`
	// Sources are the distinct source addresses of the client's datagrams, in order;
	// SourceChanges counts the changes between consecutive ones, and ReusedDCID lists each
	// change whose first client 1-RTT datagram kept the previous destination connection ID
	// (RFC 9000 section 9.5: a client migrating on purpose uses a new one): "ADDR at T s".
	Sources       []string `json:"sources"`
	SourceChanges int      `json:"source_changes"`
	ReusedDCID    []string `json:"reused_dcid,omitempty"`
}

// Goodput is one goodput measurement (the Interop Runner's: one file fetched over its
// 10 Mbit/s, 30 ms link): the file's bits over Wire.TransferMS, read from the capture, with the
// emulator's lateness during it, which decides whether the figure is a measurement (the one
// retry rule: a run during which the emulator was late is made once more, the earlier attempt
// kept here).
type Goodput struct {
	// Bytes is the size of the file fetched whole, in bytes; 0 when it did not arrive whole.
	Bytes int `json:"bytes"`
	// TimeMS is the transfer's time (Wire.TransferMS), in ms.
	TimeMS float64 `json:"time_ms"`
	// Mbps is the goodput, 8 x Bytes / TimeMS, in Mbit/s (10^6 bit/s); 0 without a figure.
	Mbps float64 `json:"mbps"`
	// Valid is whether Mbps is a measurement: the file arrived whole and the emulator was never
	// later than its bound during the transfer; InvalidReason says why not.
	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalid_reason,omitempty"`
	// LateMS is the emulator's largest release lateness during the transfer that no host
	// freeze explains, and LateBoundMS the bound it is judged by, in ms.
	LateMS      float64 `json:"late_ms"`
	LateBoundMS float64 `json:"late_bound_ms"`
	// Attempt is the attempt's number when the measurement was made again (2), 0 for a first;
	// Earlier the attempts made before it.
	Attempt int              `json:"attempt,omitempty"`
	Earlier []GoodputAttempt `json:"earlier_attempts,omitempty"`
}

// GoodputAttempt is an attempt at a goodput measurement that was made again: when it started
// (RFC 3339), what it measured in Mbit/s (not a measurement: see InvalidReason), why it was
// made again and the emulator's lateness during it in ms.
type GoodputAttempt struct {
	Time          string  `json:"time"`
	Mbps          float64 `json:"mbps"`
	InvalidReason string  `json:"invalid_reason"`
	LateMS        float64 `json:"late_ms"`
}

// Gap is a time in which a link delivered no datagram in either direction, read from the
// capture's timestamps (shaping/capture's interfaces), in milliseconds.
type Gap struct {
	// StartMS is its start, since the first datagram delivered, and LengthMS its length.
	StartMS  float64 `json:"start_ms"`
	LengthMS float64 `json:"length_ms"`
	// Dropped counts the datagrams the link dropped within it (either direction).
	Dropped int `json:"dropped"`
	// AfterUp and AfterDown count the datagrams delivered after it, per direction.
	AfterUp   int `json:"after_up"`
	AfterDown int `json:"after_down"`
}

// FileCheck is one file an exchange case fetched: its name, the bytes served, the bytes the
// client saved (-1: none saved) and whether they are the same bytes.
type FileCheck struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
	Got   int    `json:"got"`
	Match bool   `json:"match"`
}
