package matrix

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/server"
)

// needExchange skips where an exchange cannot run: -short, not root (the emulated link); tshark,
// and ngtcp2's programs when one of names is ngtcp2, are required (testenv.Require: a skip
// here, a failure in CI).
func needExchange(t *testing.T, names ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("emulated links need root")
	}
	testenv.Require(t, Tshark)
	if slices.Contains(names, Ngtcp2) {
		testenv.Require(t, server.Ngtcp2Binary, Ngtcp2Client)
	}
}

// openPeers opens the peers named (quic-go's endpoint built or taken from the cache).
func openPeers(t *testing.T, names ...string) map[string]Peer {
	t.Helper()
	out := map[string]Peer{}
	for _, n := range names {
		p, err := OpenPeer(context.Background(), n, Options{Progress: func(s string) { t.Log(s) }})
		if err != nil {
			t.Fatal(err)
		}
		out[n] = p
	}
	return out
}

// runCase runs exchange case c between client and server, logs its record and checks that its
// outcome is want and that the evidence says what the outcome says: a pass has its capture
// decoded and every file whole, an unsupported case a reason and no capture (but where the
// capture decides it: ecn, whose peers' claims make a missing mark unsupported).
func runCase(t *testing.T, c Exchange, client, srv Peer, want interop.Outcome) interop.Record {
	t.Helper()
	rec := RunExchange(context.Background(), c, client, srv, nil)
	b, _ := json.Marshal(rec.Observed.Wire)
	t.Logf("%s, server %s, client %s: %s: %s (%.0f ms)\n%s", c.Name, srv.Name, client.Name, rec.Outcome, rec.Reason, rec.DurationMS, b)
	if rec.Outcome != want {
		t.Errorf("%s, server %s, client %s: %s (%s), want %s", c.Name, srv.Name, client.Name, rec.Outcome, rec.Reason, want)
	}
	switch rec.Outcome {
	case interop.Pass:
		if rec.Observed.Wire == nil || len(rec.Observed.Files) != len(c.Files)*c.runs() {
			t.Errorf("%s: a pass without its capture or files: %+v", c.Name, rec.Observed)
		}
		for _, f := range rec.Observed.Files {
			if !f.Match || f.Got != f.Bytes {
				t.Errorf("%s: a pass with %s not whole: %+v", c.Name, f.Name, f)
			}
		}
	case interop.Unsupported:
		if rec.Reason == "" || (rec.Observed.Wire != nil) != (c.judgePeers != nil) {
			t.Errorf("%s: unsupported without a reason, or with a capture", c.Name)
		}
	}
	if rec.Kind != interop.RecordKind || rec.Link != c.Link || rec.Versions["client"] != client.Version || rec.Versions["server"] != srv.Version {
		t.Errorf("%s: record %+v", c.Name, rec)
	}
	return rec
}

// TestIntegrationExchange runs the exchange cases through their emulated links between real
// endpoints: every case quic-go to quic-go (the endpoint built with the release pltlab links)
// and ngtcp2 to ngtcp2 (the loss cases pass or fail by chance, their evidence checked either
// way: lossCase), and a few across the stacks. What a stack cannot do is unsupported
// with its reason: ngtcp2 0.12.1 has no RFC 9369 v2, no quic-go client offers ChaCha20 alone.
// Who starts a key update is recorded: the ngtcp2 client when asked, a quic-go server before a
// quic-go client (both update by themselves after 100 packets). The goodput case runs across
// the stacks, each way (goodputCase). About 110-145 s on 2 cores (blackhole's 10 MB through its
// outage about 13 s a pair, longrtt's 1.5 s RTT about 5 s, goodput's 10 MiB 11-13 s a pair, twice
// that when the emulator was late and the run was made again; the quic-go endpoint cached;
// building it adds ~25 s).
func TestIntegrationExchange(t *testing.T) {
	needExchange(t, QUICGo, Ngtcp2)
	peers := openPeers(t, QUICGo, Ngtcp2)
	unsupported := map[string]bool{Ngtcp2 + ">" + Ngtcp2 + ">v2": true, QUICGo + ">" + QUICGo + ">chacha20": true}
	for _, pair := range []struct {
		server, client string
		cases          []string
	}{
		{QUICGo, QUICGo, ExchangeNames()},
		{Ngtcp2, Ngtcp2, ExchangeNames()},
		{Ngtcp2, QUICGo, []string{"handshake", "retry"}},
		{QUICGo, Ngtcp2, []string{"transfer", "keyupdate", "chacha20"}},
	} {
		for _, name := range pair.cases {
			c, _ := LookupExchange(name)
			if isCorruption(c) || c.Goodput || c.Link == LinkRebindPort || c.Link == LinkRebindAddr || c.Client.Migrate {
				continue // TestIntegrationExchangeCorruption; goodput below, across the stacks; TestIntegrationExchangeRebind (and connectionmigration there)
			}
			want := interop.Pass
			if unsupported[pair.server+">"+pair.client+">"+name] {
				want = interop.Unsupported
			}
			if c.Link == LinkHandshakeLoss || c.Link == LinkTransferLoss {
				lossCase(t, c, peers[pair.client], peers[pair.server])
				continue
			}
			if name == "ecn" && (pair.server == QUICGo || pair.client == QUICGo) {
				ecnQUICGo(t, c, peers[pair.client], peers[pair.server])
				continue
			}
			rec := runCase(t, c, peers[pair.client], peers[pair.server], want)
			if w := rec.Observed.Wire; name == "keyupdate" && w != nil && pair.client == Ngtcp2 && w.KeyUpdateFirst != "up" {
				t.Errorf("keyupdate, server %s: the %q side flipped first, want the ngtcp2 client (asked to)", pair.server, w.KeyUpdateFirst)
			}
		}
	}
	goodput, _ := LookupExchange("goodput")
	for _, pair := range [][2]string{{Ngtcp2, QUICGo}, {QUICGo, Ngtcp2}} {
		t.Run("goodput "+pair[1]+">"+pair[0], func(t *testing.T) { goodputCase(t, goodput, peers[pair[1]], peers[pair[0]]) })
	}
}

// goodputCase runs the goodput case (10 MiB over 10 Mbit/s, 30 ms, 25 packets of queue) and
// checks its record: a pass with the file whole, its figure from the capture's transfer time,
// at least the serialization of the file's bits at the link's rate (8.39 s) and so under
// 10 Mbit/s and, on a link that carried it, above 5; valid, or invalid only with the emulator
// late on each of the rule's two attempts, the earlier one recorded.
func goodputCase(t *testing.T, c Exchange, client, srv Peer) {
	rec := runCase(t, c, client, srv, interop.Pass)
	g := rec.Observed.Goodput
	if g == nil {
		t.Fatalf("goodput, server %s, client %s: no figure in the record: %s", srv.Name, client.Name, rec.Reason)
	}
	t.Logf("goodput, server %s, client %s: %.3f Mbit/s, %d bytes in %.1f ms, valid %v %s, late %.2f ms (bound %.2f), attempt %d",
		srv.Name, client.Name, g.Mbps, g.Bytes, g.TimeMS, g.Valid, g.InvalidReason, g.LateMS, g.LateBoundMS, g.Attempt)
	least := float64(8*GoodputFile) / 10e6 * 1e3 // ms at 10 Mbit/s
	if g.Bytes != GoodputFile || g.TimeMS < least || g.Mbps <= 5 || g.Mbps >= 10 || rec.Observed.Wire.TransferMS != g.TimeMS {
		t.Errorf("goodput, server %s, client %s: %+v, want %d bytes in at least %.0f ms, 5-10 Mbit/s", srv.Name, client.Name, g, GoodputFile, least)
	}
	if !g.Valid && (!strings.Contains(g.InvalidReason, "emulator late") || g.Attempt != 2 || len(g.Earlier) != 1) {
		t.Errorf("goodput, server %s, client %s: not valid without two late attempts: %+v", srv.Name, client.Name, g)
	}
}

// lossCase runs a loss case, whose outcome is the stacks' and the dice's (through 30 % loss
// a handshake may outlast a client's limit: a gtlsclient against a quic-go server once gave up
// its fifth connection, ERR_IDLE_CLOSE), and checks that its evidence says what its outcome
// says: the link dropped datagrams, a pass has every handshake and file, a fail names what
// was missing.
func lossCase(t *testing.T, c Exchange, client, srv Peer) {
	t.Helper()
	rec := RunExchange(context.Background(), c, client, srv, nil)
	w := rec.Observed.Wire
	t.Logf("%s, server %s, client %s: %s: %s (%.0f ms)", c.Name, srv.Name, client.Name, rec.Outcome, rec.Reason, rec.DurationMS)
	if w == nil || w.Datagrams["up-dropped"]+w.Datagrams["down-dropped"] == 0 {
		t.Fatalf("%s: no capture, or no datagram dropped: %+v", c.Name, w)
	}
	switch rec.Outcome {
	case interop.Pass:
		if w.Handshakes != c.runs() || w.Connections != c.runs() {
			t.Errorf("%s: a pass with %d of %d handshakes", c.Name, w.Handshakes, w.Connections)
		}
	case interop.Fail:
		if !strings.Contains(rec.Reason, "completed the handshake") && !strings.Contains(rec.Reason, "bytes saved") && !strings.Contains(rec.Reason, "connections") {
			t.Errorf("%s: a fail that names nothing missing: %s", c.Name, rec.Reason)
		}
	default:
		t.Errorf("%s: %s (%s), want pass or fail", c.Name, rec.Outcome, rec.Reason)
	}
}

// ecnQUICGo runs ecn with a quic-go peer, which passes or is unsupported by the run: a quic-go
// server reported no ECN counts for the client's first 10 ECT(0) datagrams in 1 of 3 runs here,
// and a quic-go client, its ECN validation failed (RFC 9000 section 13.4.2.1), then marked no
// more; quic-go claims no ECN support, so that is unsupported, not a failure. It checks that
// the evidence says which: a pass has marks and ACK_ECN frames each way, an unsupported case its
// capture and the reason that quic-go does not claim ECN.
func ecnQUICGo(t *testing.T, c Exchange, client, srv Peer) {
	t.Helper()
	rec := RunExchange(context.Background(), c, client, srv, nil)
	w := rec.Observed.Wire
	t.Logf("%s, server %s, client %s: %s: %s (%.0f ms)", c.Name, srv.Name, client.Name, rec.Outcome, rec.Reason, rec.DurationMS)
	switch {
	case w == nil:
		t.Errorf("%s: no capture: %s (%s)", c.Name, rec.Outcome, rec.Reason)
	case rec.Outcome == interop.Pass:
		if w.ECN["up ect0"]+w.ECN["up ect1"] == 0 || w.ECN["down ect0"]+w.ECN["down ect1"] == 0 || w.ACKECN["up"] == 0 || w.ACKECN["down"] == 0 {
			t.Errorf("%s: a pass without ECN each way: %v, ACK_ECN %v", c.Name, w.ECN, w.ACKECN)
		}
	case rec.Outcome == interop.Unsupported:
		if !strings.Contains(rec.Reason, "does not claim ECN support") {
			t.Errorf("%s: unsupported without naming the endpoint's claim: %s", c.Name, rec.Reason)
		}
	default:
		t.Errorf("%s: %s (%s), want pass or unsupported", c.Name, rec.Outcome, rec.Reason)
	}
}

// isCorruption reports whether c is a corruption case.
func isCorruption(c Exchange) bool {
	return c.Link == LinkHandshakeCorruption || c.Link == LinkTransferCorruption
}

// TestIntegrationExchangeCorruption runs the corruption cases (handshakecorruption,
// transfercorruption) for every pair of quic-go and ngtcp2 and checks that each record's
// evidence says what its outcome says: the link corrupted datagrams (its counters) and the
// capture holds undecryptable packets (the corruption reached the AEAD, not the kernel's
// checksum), a pass has every connection and file, a fail names what was missing. Their
// outcomes are the stacks' and the dice's, as the loss cases'. About 20-40 s.
func TestIntegrationExchangeCorruption(t *testing.T) {
	needExchange(t, QUICGo, Ngtcp2)
	peers := openPeers(t, QUICGo, Ngtcp2)
	for _, pair := range [][2]string{{QUICGo, QUICGo}, {Ngtcp2, Ngtcp2}, {QUICGo, Ngtcp2}, {Ngtcp2, QUICGo}} {
		for _, name := range []string{"handshakecorruption", "transfercorruption"} {
			c, _ := LookupExchange(name)
			srv, client := peers[pair[0]], peers[pair[1]]
			rec := RunExchange(context.Background(), c, client, srv, nil)
			w := rec.Observed.Wire
			t.Logf("%s, server %s, client %s: %s: %s (%.0f ms)", name, srv.Name, client.Name, rec.Outcome, rec.Reason, rec.DurationMS)
			if w == nil || w.Corrupted["up"]+w.Corrupted["down"] == 0 || w.Undecrypted == 0 {
				t.Errorf("%s, server %s, client %s: no capture, no datagram corrupted or none undecryptable: %+v", name, srv.Name, client.Name, w)
				continue
			}
			switch rec.Outcome {
			case interop.Pass:
				if w.Connections != c.runs() || w.Handshakes == 0 {
					t.Errorf("%s: a pass with %d connections, %d handshakes seen, want %d", name, w.Connections, w.Handshakes, c.runs())
				}
			case interop.Fail:
				if !strings.Contains(rec.Reason, "handshake") && !strings.Contains(rec.Reason, "bytes saved") && !strings.Contains(rec.Reason, "connections") {
					t.Errorf("%s: a fail that names nothing missing: %s", name, rec.Reason)
				}
			default:
				t.Errorf("%s: %s (%s), want pass or fail", name, rec.Outcome, rec.Reason)
			}
		}
	}
}

// builtToFail is one exchange case made to fail on purpose: case name with its client and
// server, edit changing the case (an endpoint's fault, a feature not asked, or a link that
// does not meet what the case tests), the words the failing reason must hold, and what the
// capture must show of the fault (evidence; nil: the reason suffices).
type builtToFail struct {
	name, client, server string
	edit                 func(c *Exchange)
	why                  []string
	evidence             func(w *interop.Wire) bool
}

// shortRebind is a rebinding NAT that moves the client at 0.5 s and every 2 s after, for a
// 3 MB file (2.4 s at 10 Mbit/s): TestIntegrationExchangeRebind's link, a few seconds a run.
const shortRebind = "rate=10mbit,rtt=30ms,queue=25pkt,rebind=port@500ms/2s"

// builtToFailCases and builtToFailTransfers have at least one built-to-fail exchange per
// exchange case. ecn's endpoints cannot be made to drop their ECN marks or counts (gtlsserver
// and gtlsclient mark and count whatever they are given; quic-go claims no ECN support, so a
// quic-go side without marks is unsupported, not failed), so its link clears the marks
// instead (bleach=ecn, as a middlebox that rewrites the TOS byte): gtlsclient and gtlsserver
// then deliver no marked datagram, and both claim ECN, so the case fails naming the bleaching.
// builtToFailCases are the short ones (under a second each), builtToFailTransfers those of a
// transfer of a megabyte or more (1-4 s each).
var builtToFailCases = []builtToFail{
	{"handshake", QUICGo, QUICGo, func(c *Exchange) { c.Server.Retry = true }, []string{"Retry packets unasked"},
		func(w *interop.Wire) bool { return w.Packets["down retry"] > 0 }},
	{"retry", QUICGo, QUICGo, func(c *Exchange) { c.Server.Retry = false }, []string{"the server sent no Retry packet"},
		func(w *interop.Wire) bool { return w.Packets["down retry"] == 0 && w.HandshakeDone > 0 }},
	{"retry", QUICGo, Ngtcp2, func(c *Exchange) { c.Server.Retry = false }, []string{"the server sent no Retry packet"},
		func(w *interop.Wire) bool { return w.Packets["down retry"] == 0 && w.HandshakeDone > 0 }},
	{"resumption", QUICGo, QUICGo, func(c *Exchange) { c.Server.Faults.NoTickets = true }, []string{"sessions resumed per connection [false false], want [false true]"},
		func(w *interop.Wire) bool { return w.Connections == 2 }},
	{"zerortt", QUICGo, QUICGo, func(c *Exchange) { c.Server.ZeroRTT = false }, []string{"the client sent no 0-RTT packet", "early_data"},
		func(w *interop.Wire) bool {
			return w.Packets["up 0rtt"] == 0 && len(w.EarlyData) == 2 && !w.EarlyData[1]
		}},
	{"http3", QUICGo, QUICGo, func(c *Exchange) { c.Server.Faults.ALPN = "hq-interop" }, []string{`the server chose ALPN "", want h3`, "bytes saved"}, nil},
	{"v2", QUICGo, QUICGo, func(c *Exchange) { c.Client.V2 = false }, []string{"long header versions [0x00000001], want 0x6b3343cf alone"}, nil},
	{"longrtt", QUICGo, QUICGo, func(c *Exchange) { c.Link = LinkPlain }, []string{"the client's ClientHello was delivered 1 times, want at least 2"}, nil},
	{"ecn", Ngtcp2, Ngtcp2, func(c *Exchange) { c.Link = LinkPlain + ",bleach=ecn" }, []string{"of the client's ECN marks to Not-ECT (bleach=ecn)", "of the server's ECN marks to Not-ECT (bleach=ecn)"},
		func(w *interop.Wire) bool {
			return w.Bleached["up"] > 0 && w.Bleached["down"] > 0 && w.ECN["up ect0"]+w.ECN["up ect1"]+w.ECN["down ect0"]+w.ECN["down ect1"] == 0
		}},
	{"chacha20", Ngtcp2, QUICGo, func(c *Exchange) { c.Client.ChaCha20, c.Files = false, []int{100_000} }, []string{"want 0x1303 (TLS_CHACHA20_POLY1305_SHA256) alone"},
		func(w *interop.Wire) bool { return len(w.OfferedSuites) > 1 }},
}

var builtToFailTransfers = []builtToFail{
	{"transfer", QUICGo, QUICGo, func(c *Exchange) { c.Server.Faults.Truncate = true }, []string{"1.bin: 250000 of 500000 bytes saved"}, nil},
	{"keyupdate", Ngtcp2, Ngtcp2, func(c *Exchange) { c.Client.KeyUpdate, c.Files = false, []int{1_000_000} }, []string{"the client's 1-RTT packets never flipped the key phase bit"},
		func(w *interop.Wire) bool { return w.KeyPhaseFlips["up"] == 0 && w.Packets["up 1rtt"] > 0 }},
	{"handshakeloss", QUICGo, QUICGo, func(c *Exchange) { c.Link = LinkPlain }, []string{"the link dropped no datagram: loss was not met"},
		func(w *interop.Wire) bool {
			return w.Connections == HandshakeLossRuns && w.Handshakes == HandshakeLossRuns
		}},
	{"transferloss", QUICGo, QUICGo, func(c *Exchange) { c.Server.Faults.Truncate = true }, []string{"1.bin: 500000 of 1000000 bytes saved"},
		func(w *interop.Wire) bool { return w.Datagrams["up-dropped"]+w.Datagrams["down-dropped"] > 0 }},
	{"handshakecorruption", QUICGo, QUICGo, func(c *Exchange) { c.Link = LinkPlain }, []string{"the link corrupted no datagram: corruption was not met"}, nil},
	{"transfercorruption", QUICGo, QUICGo, func(c *Exchange) { c.Server.Faults.Truncate = true }, []string{"1.bin: 500000 of 1000000 bytes saved"},
		func(w *interop.Wire) bool { return w.Corrupted["up"]+w.Corrupted["down"] > 0 }},
	{"blackhole", QUICGo, QUICGo, func(c *Exchange) { c.Link, c.Files = LinkPlain, []int{1_000_000} }, []string{"the outage was not met during the exchange"}, nil},
	{"rebind-port", QUICGo, QUICGo, func(c *Exchange) { c.Link, c.Files, c.Client.ZeroCID = shortRebind, []int{3_000_000}, true }, []string{"PATH_CHALLENGE"},
		func(w *interop.Wire) bool { return w.Rebinds > 0 && w.Paths != nil && len(w.Paths.Destinations) > 1 }},
	{"rebind-addr", QUICGo, QUICGo, func(c *Exchange) { c.Link, c.Files = shortRebind, []int{3_000_000} }, []string{"client IPv4 addresses", "want more than one: it never saw the rebinding"},
		func(w *interop.Wire) bool { return w.Rebinds > 0 && w.Paths != nil && len(w.Paths.Destinations) > 1 }},
	{"connectionmigration", Ngtcp2, Ngtcp2, func(c *Exchange) { c.Client.Migrate = false }, []string{"want more than one: it did not migrate"}, nil},
	{"connectionmigration", QUICGo, QUICGo, func(c *Exchange) { c.Link, c.Files, c.Client.Migrate = shortRebind, []int{3_000_000}, false }, []string{"kept its destination connection ID (RFC 9000 section 9.5)"},
		func(w *interop.Wire) bool { return w.Paths != nil && len(w.Paths.Sources) > 1 }},
	{"goodput", QUICGo, QUICGo, func(c *Exchange) { c.Server.Faults.Truncate, c.Files = true, []int{1_000_000} }, []string{"1.bin: 500000 of 1000000 bytes saved"}, nil},
}

// TestIntegrationExchangeBuiltToFail runs the short built-to-fail exchanges
// (builtToFailCases) through the real emulator between real endpoints and checks that each
// fails naming what was missing, with the evidence of its fault in the capture: a quic-go
// server that sends a Retry unasked (handshake), issues no session ticket (resumption), refuses
// 0-RTT or accepts only ALPN hq-interop (http3); servers not asked for a Retry; a client not
// asked for QUIC v2 or ChaCha20; a 30 ms RTT for longrtt. About 7 s (0.6-0.9 s a case).
func TestIntegrationExchangeBuiltToFail(t *testing.T) {
	runBuiltToFail(t, builtToFailCases)
}

// TestIntegrationExchangeBuiltToFailTransfers runs the built-to-fail exchanges of a transfer
// (builtToFailTransfers), as TestIntegrationExchangeBuiltToFail: a quic-go server that
// truncates every file (transfer, transferloss, transfercorruption, goodput: a transfer cut
// short, its goodput figure not valid); no key update asked of gtlsclient and gtlsserver; a
// quic-go client with zero-length connection IDs, whose rebinding quic-go's server follows
// without a PATH_CHALLENGE (rebind-port); a NAT that moves only the port (rebind-addr) or
// rebinds a client that does not know it moved (connectionmigration: its connection ID kept);
// a client not asked to migrate; links without loss, corruption or outage. About 29 s (1-4 s
// a case), in make test-studies.
func TestIntegrationExchangeBuiltToFailTransfers(t *testing.T) {
	runBuiltToFail(t, builtToFailTransfers)
}

// runBuiltToFail runs each of cases as a subtest: the case edited, run, failed, its reason
// holding the words asked and its capture the fault's evidence; a goodput figure never valid.
func runBuiltToFail(t *testing.T, cases []builtToFail) {
	needExchange(t, QUICGo, Ngtcp2)
	peers := openPeers(t, QUICGo, Ngtcp2)
	for _, b := range cases {
		t.Run(b.name+" "+b.client+">"+b.server, func(t *testing.T) {
			c, ok := LookupExchange(b.name)
			if !ok {
				t.Fatalf("no case %s", b.name)
			}
			b.edit(&c)
			rec := runCase(t, c, peers[b.client], peers[b.server], interop.Fail)
			for _, why := range b.why {
				if !strings.Contains(rec.Reason, why) {
					t.Errorf("the reason does not say %q: %s", why, rec.Reason)
				}
			}
			if w := rec.Observed.Wire; w == nil || (b.evidence != nil && !b.evidence(w)) {
				t.Errorf("the capture does not show the fault: %+v", w)
			}
			if g := rec.Observed.Goodput; g != nil && g.Valid {
				t.Errorf("a failed transfer with a valid goodput figure: %+v", g)
			}
		})
	}
}

// TestIntegrationExchangeRebind runs rebind-addr between quic-go's client and server through
// the real emulator, shortened to a few seconds (3.7 s here): a 3 MB file (2.4 s at 10 Mbit/s) and the
// NAT's rebindings at 0.5 s and every 2 s after. It passes only when the link's NAT moved the
// client to another IPv4 address and port (rebinds counted, the capture's server datagrams to
// more than one client address) and the server validated each new path with a PATH_CHALLENGE
// the client answered, the file whole.
func TestIntegrationExchangeRebind(t *testing.T) {
	needExchange(t, QUICGo)
	peers := openPeers(t, QUICGo)
	c, _ := LookupExchange("rebind-addr")
	c.Link, c.Files = "rate=10mbit,rtt=30ms,queue=25pkt,rebind=addr@500ms/2s", []int{3_000_000}
	rec := runCase(t, c, peers[QUICGo], peers[QUICGo], interop.Pass)
	w := rec.Observed.Wire
	if w == nil || w.Paths == nil {
		t.Fatalf("no paths in the capture: %+v", w)
	}
	if hosts := distinctHosts(w.Paths.Destinations); w.Rebinds < 1 || len(hosts) < 2 || len(w.Paths.Challenges) < w.Paths.Migrations {
		t.Errorf("%d rebindings, the server sent to %v, %d challenges for %d changes", w.Rebinds, hosts, len(w.Paths.Challenges), w.Paths.Migrations)
	}
}

// TestIntegrationExchangeMigration runs connectionmigration with gtlsclient against gtlsserver
// and with quic-go's client (the endpoint's -migrate: Conn.AddPath, Path.Probe, Path.Switch)
// against quic-go's server (about 3 s each) and checks what the capture must show whatever
// the verdict: one connection, the file whole, the client's datagrams from two addresses (it
// migrated), each change with a new destination connection ID, the server's datagrams to
// both. The verdict itself, the Interop Runner's strict rule on the server's first datagram
// to the new address, failed with gtlsclient in the runs recorded in docs/design.md, so it is
// logged, not asked.
func TestIntegrationExchangeMigration(t *testing.T) {
	needExchange(t, QUICGo, Ngtcp2)
	peers := openPeers(t, QUICGo, Ngtcp2)
	c, _ := LookupExchange("connectionmigration")
	for _, name := range []string{Ngtcp2, QUICGo} {
		t.Run(name, func(t *testing.T) {
			rec := RunExchange(context.Background(), c, peers[name], peers[name], nil)
			t.Logf("%s: %s", rec.Outcome, rec.Reason)
			w := rec.Observed.Wire
			if w == nil || w.Paths == nil {
				t.Fatalf("%s (%s): no paths in the capture", rec.Outcome, rec.Reason)
			}
			p := w.Paths
			b, _ := json.Marshal(p)
			t.Logf("paths: %s", b)
			if w.Connections != 1 || len(p.Sources) < 2 || len(p.ReusedDCID) > 0 || len(p.Destinations) < 2 {
				t.Errorf("%d connections, sources %v (DCID kept %v), destinations %v", w.Connections, p.Sources, p.ReusedDCID, p.Destinations)
			}
			for _, f := range rec.Observed.Files {
				if !f.Match {
					t.Errorf("%s not whole: %+v", f.Name, f)
				}
			}
		})
	}
}

// TestIntegrationExchangeECNBleach runs ecn between gtlsclient and gtlsserver (both claim ECN)
// on the case's plain link, where it passes with marked datagrams each way and nothing
// bleached, and through a link that bleaches the down direction only (down.bleach=ecn), where
// it fails naming the server's marks the link cleared and not the client's, whose marks still
// arrive. About 3 s.
func TestIntegrationExchangeECNBleach(t *testing.T) {
	needExchange(t, Ngtcp2)
	peers := openPeers(t, Ngtcp2)
	c, _ := LookupExchange("ecn")
	rec := runCase(t, c, peers[Ngtcp2], peers[Ngtcp2], interop.Pass)
	if w := rec.Observed.Wire; w == nil || w.ECN["up ect0"]+w.ECN["up ect1"] == 0 || w.ECN["down ect0"]+w.ECN["down ect1"] == 0 || w.Bleached != nil {
		t.Errorf("plain link: want marks each way and none bleached: %+v", w)
	}
	c.Link = LinkPlain + ",down.bleach=ecn"
	rec = runCase(t, c, peers[Ngtcp2], peers[Ngtcp2], interop.Fail)
	if !strings.Contains(rec.Reason, "of the server's ECN marks to Not-ECT (bleach=ecn): none of its") || strings.Contains(rec.Reason, "client's ECN marks") {
		t.Errorf("down.bleach=ecn: the reason does not name the server's bleached marks alone: %s", rec.Reason)
	}
	if w := rec.Observed.Wire; w == nil || w.Bleached["down"] == 0 || w.Bleached["up"] != 0 || w.ECN["down ect0"]+w.ECN["down ect1"] != 0 || w.ECN["up ect0"]+w.ECN["up ect1"] == 0 {
		t.Errorf("down.bleach=ecn: want the server's marks bleached, the client's delivered: %+v", w)
	}
}
