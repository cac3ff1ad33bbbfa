package matrix

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/interop"
)

// Tshark is the dissector that decrypts an exchange case's capture (Debian package tshark;
// make setup installs it).
const Tshark = "tshark"

// wireFields are the fields Decode asks tshark for, one line per captured datagram, the values
// of the datagram's coalesced packets joined by commas.
var wireFields = []string{
	"frame.interface_id", "quic.header_form", "quic.long.packet_type", "quic.long.packet_type_v2",
	"quic.version", "quic.scid", "quic.dcid", "quic.key_phase", "quic.frame_type", "quic.token",
	"quic.retry_token", "quic.stream.stream_id", "tls.handshake.type", "tls.handshake.extension.type",
	"tls.handshake.extensions_alpn_str", "quic.decryption_failed", "frame.time_relative", "ip.dsfield.ecn",
	"tls.handshake.ciphersuite", "quic.crypto.offset", "ip.src", "ip.dst", "udp.srcport", "udp.dstport",
	"quic.path_challenge.data", "quic.path_response.data", "tls.quic.parameter.type",
}

// Decode runs tshark on the pcapng capture of a link (package shaping/capture's four
// interfaces: down, up, down-dropped, up-dropped) with the TLS key log keylog and reads the
// facts of its QUIC packets (DecodeFields; corrupted as there). Every datagram to or from the
// server's UDP port is read as QUIC (tshark's -d): by its port numbers alone tshark may take
// a client's port for another protocol's (seen once: a gtlsclient exchange with no QUIC packet
// decoded), and a rebinding draws the client's ports at random. Errors: tshark missing or
// failing.
func Decode(ctx context.Context, pcap, keylog string, port int, corrupted bool) (*interop.Wire, error) {
	args := []string{"-r", pcap, "-o", "tls.keylog_file:" + keylog, "-d", "udp.port==" + strconv.Itoa(port) + ",quic",
		"-T", "fields", "-E", "separator=/t", "-E", "aggregator=,", "-E", "occurrence=a"}
	for _, f := range wireFields {
		args = append(args, "-e", f)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, Tshark, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("tshark %s: %w: %s", pcap, err, strings.TrimSpace(stderr.String()))
	}
	return DecodeFields(bytes.NewReader(out), corrupted)
}

// TLS handshake message and extension numbers (RFC 8446 section 4) and QUIC frame types
// (RFC 9000 section 19) Decode reads.
const (
	tlsClientHello   = 1
	tlsServerHello   = 2
	tlsEncryptedExts = 8
	tlsCertificate   = 11
	extPreSharedKey  = 41
	extEarlyData     = 42
	frameCrypto      = 0x06
	frameHSDone      = 0x1e
	frameACKECN      = 0x03
	// tpDisableActiveMigration is the transport parameter disable_active_migration (RFC 9000
	// section 18.2).
	tpDisableActiveMigration = 0x0c
)

// ecnNames name the ECN codepoints of an IP header (RFC 3168 section 5).
var ecnNames = map[int]string{0: "not-ect", 1: "ect1", 2: "ect0", 3: "ce"}

// v1Types and v2Types name the long header packet types of QUIC v1 (RFC 9000 section 17.2)
// and v2 (RFC 9369 section 3.2).
var (
	v1Types = map[string]string{"0": "initial", "1": "0rtt", "2": "handshake", "3": "retry"}
	v2Types = map[string]string{"1": "initial", "2": "0rtt", "3": "handshake", "0": "retry"}
)

// connTLS is what one connection's server said in TLS, and how far its handshake got: the
// client's 1-RTT packets delivered (up1RTT), then a server 1-RTT packet delivered (done).
type connTLS struct {
	psk, cert, early, up1RTT, done bool
	suite                          string // the ServerHello's cipher suite
}

// stamp is a delivered datagram's capture time (seconds) and direction.
type stamp struct {
	t   float64
	dir string
}

// DecodeFields reads tshark's field lines (wireFields, tab-separated) into a Wire. corrupted
// says the link corrupted datagrams (corrupt=P%): their flipped bit may sit in a cleartext
// header field, and a client Initial's source connection ID changed by one would count as one
// more connection, and take that connection's later packets with it. So then a client datagram
// holding a packet the dissector could not decrypt opens no connection: the receiver could not
// decrypt it either, and the client sends its Initial again.
func DecodeFields(r io.Reader, corrupted bool) (*interop.Wire, error) {
	d := &wireDecoder{corrupted: corrupted, firstUp: -1, lastFile: -1, alias: map[string]string{}, lastPhase: map[string]string{}, streams: map[string]map[string]bool{},
		w: &interop.Wire{Datagrams: map[string]int{}, Packets: map[string]int{}, KeyPhaseFlips: map[string]int{}, Streams: map[string]int{},
			ECN: map[string]int{}, ACKECN: map[string]int{}}}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != len(wireFields) {
			return nil, fmt.Errorf("tshark line with %d fields, want %d: %q", len(f), len(wireFields), sc.Text())
		}
		if err := d.datagram(f); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read tshark output: %w", err)
	}
	return d.finish(), nil
}

// wireDecoder is DecodeFields' state across the capture's datagrams.
type wireDecoder struct {
	w         *interop.Wire
	corrupted bool
	delivered []stamp
	dropped   []float64
	conns     []string          // the connections' keys (connKey), in order
	alias     map[string]string // a Retry's source connection ID -> the key of its connection
	tls       []connTLS         // per connection, what its handshake showed
	lastPhase map[string]string // direction -> the key phase of its last 1-RTT packet
	streams   map[string]map[string]bool
	retrySeen bool
	// firstUp and lastFile are the capture times (s) of the client's first delivered datagram
	// and of the last delivered server datagram with a request stream's STREAM frame (-1: none).
	firstUp, lastFile float64
	paths             pathTrack
}

// fieldValues is field i of a tshark line split at its commas (the datagram's coalesced
// packets' values), nil when empty.
type fieldValues func(i int) []string

// datagram reads one tshark line f (wireFields): its direction, time, ECN codepoint, packet
// types and versions, then its connection, frames and handshake facts.
func (d *wireDecoder) datagram(f []string) error {
	v := fieldValues(func(i int) []string {
		if f[i] == "" {
			return nil
		}
		return strings.Split(f[i], ",")
	})
	w := d.w
	dir := map[string]string{"0": "down", "1": "up", "2": "down-dropped", "3": "up-dropped"}[f[0]]
	if dir == "" {
		return fmt.Errorf("tshark line of interface %q: want 0 to 3 (package shaping/capture's interfaces)", f[0])
	}
	w.Datagrams[dir]++
	t, terr := strconv.ParseFloat(f[16], 64)
	d.paths.datagram(dir, t, v)
	if dir != "up" && dir != "down" {
		if terr == nil {
			d.dropped = append(d.dropped, t)
		}
		return nil
	}
	if terr == nil {
		d.delivered = append(d.delivered, stamp{t, dir})
		d.transfer(dir, t, ints(v(11)))
	}
	if e := ints(v(17)); len(e) > 0 {
		w.ECN[dir+" "+ecnNames[e[0]&3]]++
	}
	types := packetTypes(v(1), v(2), v(3), v(4))
	for _, t := range types {
		w.Packets[dir+" "+t]++
	}
	for _, ver := range v(4) {
		if !slices.Contains(w.Versions, ver) {
			w.Versions = append(w.Versions, ver)
		}
	}
	d.connection(dir, types, v)
	frames := ints(v(8))
	d.frames(dir, frames, v)
	d.handshake(dir, types, frames, v)
	w.Undecrypted += len(v(15))
	return nil
}

// connection follows the datagram's connection: a client Initial under a new connection ID
// opens one (unless, on a corrupting link, it could not be decrypted), a server's source IDs
// are aliases of the current one, a Retry's token and its echo.
func (d *wireDecoder) connection(dir string, types []string, v fieldValues) {
	w := d.w
	if dir == "up" && slices.Contains(types, "initial") {
		if key := connKey(first(v(5)), first(v(6)), d.alias); !slices.Contains(d.conns, key) && !(d.corrupted && len(v(15)) > 0) {
			d.conns = append(d.conns, key)
			d.tls = append(d.tls, connTLS{})
			clear(d.lastPhase) // a new connection's keys start at phase 0
		}
		if d.retrySeen && w.RetryToken != "" && !w.TokenEchoed {
			w.TokenEchoed = slices.Contains(v(9), w.RetryToken)
		}
	}
	if dir == "down" && len(d.conns) > 0 {
		for _, scid := range v(5) {
			if _, ok := d.alias[scid]; !ok && scid != "" {
				d.alias[scid] = d.conns[len(d.conns)-1]
			}
		}
	}
	if dir == "down" && slices.Contains(types, "retry") && w.RetryToken == "" {
		w.RetryToken, d.retrySeen = first(v(10)), true
	}
}

// transfer follows the fetch's span: the client's first delivered datagram and the last server
// datagram carrying a STREAM frame of a client-initiated bidirectional stream (a request's
// answer; stream ID mod 4 = 0, RFC 9000 section 2.1), at capture time t (s).
func (d *wireDecoder) transfer(dir string, t float64, streams []int) {
	if dir == "up" && d.firstUp < 0 {
		d.firstUp = t
	}
	if dir == "down" && slices.ContainsFunc(streams, func(id int) bool { return id%4 == 0 }) {
		d.lastFile = t
	}
}

// frames counts the datagram's key phase flips, HANDSHAKE_DONE and ACK_ECN frames and the
// streams it carries.
func (d *wireDecoder) frames(dir string, frames []int, v fieldValues) {
	w := d.w
	for _, kp := range v(7) {
		if p, ok := d.lastPhase[dir]; ok && p != kp {
			w.KeyPhaseFlips[dir]++
			if w.KeyUpdateFirst == "" {
				w.KeyUpdateFirst = dir
			}
		}
		d.lastPhase[dir] = kp
	}
	if dir == "down" {
		w.HandshakeDone += count(frames, frameHSDone)
	}
	if n := count(frames, frameACKECN); n > 0 {
		w.ACKECN[dir] += n
	}
	for _, id := range ints(v(11)) {
		kind := dir + " " + map[int]string{0: "bidi", 1: "bidi", 2: "uni", 3: "uni"}[id%4]
		if d.streams[kind] == nil {
			d.streams[kind] = map[string]bool{}
		}
		d.streams[kind][strconv.Itoa(id)] = true
	}
}

// handshake reads the TLS facts of the datagram: the client's ClientHellos and offered cipher
// suites, whether the server's transport parameters forbid active migration, and per connection whether 1-RTT went both ways, a PSK without a certificate
// (resumed), early data accepted, the chosen suite and the ALPN.
func (d *wireDecoder) handshake(dir string, types []string, frames []int, v fieldValues) {
	w := d.w
	hs, ext := ints(v(12)), ints(v(13))
	if dir == "up" && clientHello(types, frames, ints(v(19))) {
		w.ClientHellos++
	}
	if dir == "up" && slices.Contains(types, "initial") && slices.Contains(hs, tlsClientHello) {
		for _, cs := range ints(v(18)) {
			if x := fmt.Sprintf("0x%04x", cs); !slices.Contains(w.OfferedSuites, x) {
				w.OfferedSuites = append(w.OfferedSuites, x)
			}
		}
	}
	if dir == "down" {
		w.MigrationDisabled = w.MigrationDisabled || disablesMigration(v(26))
	}
	if len(d.tls) == 0 {
		return
	}
	c := &d.tls[len(d.tls)-1]
	if slices.Contains(types, "1rtt") {
		c.up1RTT = c.up1RTT || dir == "up"
		c.done = c.done || dir == "down" && c.up1RTT
	}
	if dir == "down" {
		c.psk = c.psk || slices.Contains(hs, tlsServerHello) && slices.Contains(ext, extPreSharedKey)
		c.cert = c.cert || slices.Contains(hs, tlsCertificate)
		c.early = c.early || slices.Contains(hs, tlsEncryptedExts) && slices.Contains(ext, extEarlyData)
		if cs := ints(v(18)); c.suite == "" && slices.Contains(hs, tlsServerHello) && len(cs) > 0 {
			c.suite = fmt.Sprintf("0x%04x", cs[0])
		}
		if a := first(v(14)); a != "" && w.ALPN == "" {
			w.ALPN = a
		}
	}
}

// disablesMigration reports whether the transport parameter types tps (tshark's
// tls.quic.parameter.type: a number, or its name where tshark prints one) hold
// disable_active_migration.
func disablesMigration(tps []string) bool {
	return slices.Contains(ints(tps), tpDisableActiveMigration) ||
		slices.ContainsFunc(tps, func(t string) bool { return strings.Contains(t, "disable_active_migration") })
}

// finish totals the connections, handshakes, resumptions, early data, chosen suites, the
// longest delivery gap and the streams.
func (d *wireDecoder) finish() *interop.Wire {
	w := d.w
	w.Connections = len(d.conns)
	for _, c := range d.tls {
		if c.done {
			w.Handshakes++
		}
		w.Resumed = append(w.Resumed, c.psk && !c.cert)
		w.EarlyData = append(w.EarlyData, c.early)
		if c.suite != "" {
			w.ChosenSuites = append(w.ChosenSuites, c.suite)
		}
	}
	w.Gap = longestGap(d.delivered, d.dropped)
	if d.firstUp >= 0 && d.lastFile > d.firstUp {
		w.TransferMS = math.Round((d.lastFile-d.firstUp)*1e6) / 1e3
	}
	for k, ids := range d.streams {
		w.Streams[k] = len(ids)
	}
	w.Paths = d.paths.finish()
	return w
}

// clientHello reports whether a client datagram of these packet types, frames and CRYPTO
// offsets carries its ClientHello: an Initial with a CRYPTO frame at offset 0 and no Handshake
// packet (the client's only Initial CRYPTO data is its ClientHello; once it sends Handshake
// packets that is acknowledged). tshark 4.0 dissects a ClientHello once: a retransmission shows
// only as its CRYPTO frame, without tls.handshake.type.
func clientHello(types []string, frames, offsets []int) bool {
	return slices.Contains(types, "initial") && !slices.Contains(types, "handshake") &&
		slices.Contains(frames, frameCrypto) && slices.Contains(offsets, 0)
}

// longestGap finds the longest time between two consecutive delivered datagrams (either
// direction), the dropped datagrams within it and those delivered after it; nil with fewer than
// two delivered. Times are the capture's, in seconds.
func longestGap(got []stamp, dropped []float64) *interop.Gap {
	if len(got) < 2 {
		return nil
	}
	slices.SortStableFunc(got, func(a, b stamp) int { return cmp.Compare(a.t, b.t) })
	i := 0 // the gap lies between got[i] and got[i+1]
	for j := 1; j+1 < len(got); j++ {
		if got[j+1].t-got[j].t > got[i+1].t-got[i].t {
			i = j
		}
	}
	ms := func(s float64) float64 { return math.Round(s*1e6) / 1e3 }
	g := &interop.Gap{StartMS: ms(got[i].t - got[0].t), LengthMS: ms(got[i+1].t - got[i].t)}
	for _, d := range dropped {
		if d > got[i].t && d < got[i+1].t {
			g.Dropped++
		}
	}
	for _, s := range got[i+1:] {
		if s.dir == "up" {
			g.AfterUp++
		} else {
			g.AfterDown++
		}
	}
	return g
}

// connKey names the connection of a client Initial: its source connection ID, or, for a client
// that uses zero-length ones (quic-go's clients before v0.35 did), its destination connection
// ID, which after the server's first Initial or Retry is the one the server chose (alias maps
// the server's source connection IDs to the connection they were first seen in).
func connKey(scid, dcid string, alias map[string]string) string {
	if scid != "" {
		return "s:" + scid
	}
	if k, ok := alias[dcid]; ok {
		return k
	}
	return "d:" + dcid
}

// packetTypes names the packets of one datagram from the header forms (1 long, 0 short) and
// the long headers' types (v1 and v2 numbering) and versions, in order.
func packetTypes(forms, t1, t2, versions []string) []string {
	var out []string
	long := 0
	for _, form := range forms {
		if form != "1" {
			out = append(out, "1rtt")
			continue
		}
		name := "long"
		if long < len(versions) && versions[long] == wireV2 && long < len(t2) {
			name = v2Types[t2[long]]
		} else if long < len(t1) {
			name = v1Types[t1[long]]
		}
		if name == "" {
			name = "long"
		}
		out = append(out, name)
		long++
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// ints parses decimal or 0x-hex values, skipping any that are neither.
func ints(s []string) []int {
	var out []int
	for _, x := range s {
		if n, err := strconv.ParseInt(x, 0, 64); err == nil {
			out = append(out, int(n))
		}
	}
	return out
}

func count(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}
