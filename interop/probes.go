package interop

import (
	"context"
	"crypto/rand"

	"fmt"
	"slices"
	"time"
)

// GreaseVersion is the version the version-negotiation probe offers: of the reserved form
// 0x?a?a?a?a, which no endpoint may support, so it forces Version Negotiation (RFC 9000
// section 15).
const GreaseVersion uint32 = 0x1a2a3a4a

// MinInitialDatagram is the smallest UDP payload that may carry a client's Initial, in bytes
// (RFC 9000 section 14.1).
const MinInitialDatagram = 1200

// SmallDatagram is the size of initial-under-1200's undersized datagram, in bytes.
const SmallDatagram = 1000

// AmplificationFactor is how many times the bytes received from an unvalidated address a
// server may send to it (RFC 9000 section 8.1).
const AmplificationFactor = 3

// probeVersionNegotiation sends a 1200-byte datagram with a long header of GreaseVersion and
// judges the answer (RFC 9000 sections 6.1 and 17.2.1): pass when a Version Negotiation packet
// comes back whose DCID and SCID are the probe's SCID and DCID and whose list does not hold
// the offered version; fail for no answer (a server SHOULD answer, section 6.1) or another one.
func probeVersionNegotiation(ctx context.Context, t Target, ev *Observation) (Outcome, string, error) {
	s, err := newSession(t, ev)
	if err != nil {
		return Error, "", err
	}
	defer s.close()
	pkt, err := s.initial(ctx, t, GreaseVersion, MinInitialDatagram)
	if err != nil {
		return Error, "", err
	}
	if err := s.send(pkt); err != nil {
		return Error, "", err
	}
	got, err := s.receive(ctx, t.Quiet, time.Now().Add(t.Quiet), func(d Datagram) bool { return true })
	if err != nil {
		return Error, "", err
	}
	if len(got) == 0 {
		return Fail, fmt.Sprintf("no answer within %v to a 1200-byte datagram of version 0x%08x", t.Quiet, GreaseVersion), nil
	}
	raw := s.lastRaw
	h, err := ParseHeader(raw)
	if err != nil || h.Type != TypeVersionNegotiation {
		return Fail, fmt.Sprintf("answer of %d bytes is not a Version Negotiation packet (%v %v)", len(raw), h.Type, err), nil
	}
	for _, v := range h.Versions {
		ev.VersionsListed = append(ev.VersionsListed, fmt.Sprintf("0x%08x", v))
	}
	switch {
	case string(h.DCID) != string(s.scid) || string(h.SCID) != string(s.dcid):
		return Fail, fmt.Sprintf("Version Negotiation does not echo the connection IDs (DCID %x SCID %x, sent DCID %x SCID %x)", h.DCID, h.SCID, s.dcid, s.scid), nil
	case len(h.Versions) == 0:
		return Fail, "Version Negotiation lists no version", nil
	case slices.Contains(h.Versions, GreaseVersion):
		return Fail, "Version Negotiation lists the version offered", nil
	}
	return Pass, fmt.Sprintf("Version Negotiation listing %d versions %v", len(h.Versions), ev.VersionsListed), nil
}

// probeSmallInitial sends a valid Initial (a real ClientHello) padded to a datagram of
// SmallDatagram bytes and expects silence for t.Quiet (RFC 9000 section 14.1: the server
// discards it); then, on new connection IDs, the same Initial in a 1200-byte datagram as the
// control, which must be answered, or the silence proves nothing (outcome error).
func probeSmallInitial(ctx context.Context, t Target, ev *Observation) (Outcome, string, error) {
	s, err := newSession(t, ev)
	if err != nil {
		return Error, "", err
	}
	defer s.close()
	pkt, err := s.initial(ctx, t, Version1, SmallDatagram)
	if err != nil {
		return Error, "", err
	}
	if err := s.send(pkt); err != nil {
		return Error, "", err
	}
	answered, err := s.receive(ctx, 0, time.Now().Add(t.Quiet), nil)
	if err != nil {
		return Error, "", err
	}
	if err := s.newIDs(); err != nil {
		return Error, "", err
	}
	if pkt, err = s.initial(ctx, t, Version1, MinInitialDatagram); err != nil {
		return Error, "", err
	}
	if err := s.send(pkt); err != nil {
		return Error, "", err
	}
	control, err := s.receive(ctx, t.Quiet, time.Now().Add(t.Quiet), func(Datagram) bool { return true })
	if err != nil {
		return Error, "", err
	}
	ok := len(control) > 0
	ev.ControlAnswered = &ok
	switch {
	case len(answered) > 0:
		return Fail, fmt.Sprintf("answered an Initial in a %d-byte datagram with %d datagrams (%d bytes)", SmallDatagram, len(answered), sumSizes(answered)), nil
	case !ok:
		return Error, fmt.Sprintf("no answer to the %d-byte Initial, but none to the 1200-byte control either: the silence proves nothing", SmallDatagram), nil
	}
	return Pass, fmt.Sprintf("no answer within %v to an Initial in a %d-byte datagram; the 1200-byte control was answered", t.Quiet, SmallDatagram), nil
}

// probeAmplification sends one Initial in a 1200-byte datagram, never sends anything else
// (no ACK, so the server cannot validate the address, RFC 9000 section 8.1), and counts what
// the server sends for t.Window: pass when it is at most AmplificationFactor x 1200 bytes. A
// Retry (section 8.1.2) is a pass too, the server having sent no more than it. No answer at
// all is an error: the limit was never tested.
func probeAmplification(ctx context.Context, t Target, ev *Observation) (Outcome, string, error) {
	s, err := newSession(t, ev)
	if err != nil {
		return Error, "", err
	}
	defer s.close()
	pkt, err := s.initial(ctx, t, Version1, MinInitialDatagram)
	if err != nil {
		return Error, "", err
	}
	if err := s.send(pkt); err != nil {
		return Error, "", err
	}
	got, err := s.receive(ctx, 0, time.Now().Add(t.Window), nil)
	if err != nil {
		return Error, "", err
	}
	ev.LimitBytes = AmplificationFactor * ev.BytesSent
	ev.Ratio = float64(ev.BytesReceived) / float64(ev.BytesSent)
	n := ev.BytesReceived
	ev.EachUnderLimit = n > 0 && n-got[len(got)-1].Size < ev.LimitBytes
	switch {
	case n == 0:
		return Error, fmt.Sprintf("no answer within %v to a valid Initial: the limit was not tested", t.Window), nil
	case n > ev.LimitBytes:
		how := "the last datagram left with the limit already reached"
		if ev.EachUnderLimit {
			how = "each datagram left while the bytes before it were under the limit: checked before each packet, not at its end"
		}
		return Fail, fmt.Sprintf("sent %d bytes in %d datagrams to an unvalidated address that sent %d (%.2fx > %dx, %d bytes over); %s", n, len(got), ev.BytesSent, ev.Ratio, AmplificationFactor, n-ev.LimitBytes, how), nil
	case !ev.ServerHello && !hasType(got, TypeRetry):
		return Fail, fmt.Sprintf("%d bytes received, within the limit, but no ServerHello TLS accepts and no Retry: %s", n, ev.TLSError), nil
	}
	return Pass, fmt.Sprintf("%d bytes in %d datagrams over %v to the probe's %d (%.2fx <= %dx)", n, len(got), t.Window, ev.BytesSent, ev.Ratio, AmplificationFactor), nil
}

func sumSizes(ds []Datagram) int {
	n := 0
	for _, d := range ds {
		n += d.Size
	}
	return n
}

func hasType(ds []Datagram, pt PacketType) bool {
	for _, d := range ds {
		for _, p := range d.Packets {
			if p.Type == pt {
				return true
			}
		}
	}
	return false
}

// ResetTrigger is the size of the stateless-reset probe's short-header packet, in bytes: more
// than the 21 bytes a Stateless Reset needs at least, so that one smaller than it can exist
// (RFC 9000 section 10.3.3), and small enough that no server takes it for a new connection.
const ResetTrigger = 100

// MinStatelessReset is the smallest Stateless Reset, in bytes: 5 bytes of header and
// unpredictable bits (at least 38 of them) and the 16-byte token (RFC 9000 section 10.3).
const MinStatelessReset = 21

// probeStatelessReset sends a short-header packet of ResetTrigger random bytes (a fixed bit set,
// an unknown 18-byte connection ID) and judges what comes back (RFC 9000 section 10.3): no
// answer is unsupported (sending a Stateless Reset is a MAY); an answer passes when it has the
// short header form with the fixed bit, at least MinStatelessReset bytes and fewer than the
// trigger (section 10.3.3, so two endpoints cannot loop); anything else fails. The token cannot
// be checked: a server derives it from a connection ID the probe never had from it.
func probeStatelessReset(ctx context.Context, t Target, ev *Observation) (Outcome, string, error) {
	s, err := newSession(t, ev)
	if err != nil {
		return Error, "", err
	}
	defer s.close()
	pkt := make([]byte, ResetTrigger)
	rand.Read(pkt)
	pkt[0] = 0x40 | pkt[0]&0x3f
	if err := s.send(pkt); err != nil {
		return Error, "", err
	}
	got, err := s.receive(ctx, t.Quiet, time.Now().Add(t.Quiet), func(Datagram) bool { return true })
	if err != nil {
		return Error, "", err
	}
	if len(got) == 0 {
		return Unsupported, fmt.Sprintf("no Stateless Reset within %v for a %d-byte short-header packet of an unknown connection (sending one is optional, RFC 9000 section 10.3)", t.Quiet, ResetTrigger), nil
	}
	raw := s.lastRaw
	if len(raw) >= 16 {
		ev.ResetToken = fmt.Sprintf("%x", raw[len(raw)-16:])
	}
	switch {
	case raw[0]&0xc0 != 0x40:
		return Fail, fmt.Sprintf("answer of %d bytes is not in the short header form with the fixed bit (first byte 0x%02x)", len(raw), raw[0]), nil
	case len(raw) < MinStatelessReset:
		return Fail, fmt.Sprintf("Stateless Reset of %d bytes, under the %d a reset needs", len(raw), MinStatelessReset), nil
	case len(raw) >= ResetTrigger:
		return Fail, fmt.Sprintf("Stateless Reset of %d bytes for a %d-byte packet: not smaller than its trigger (RFC 9000 section 10.3.3)", len(raw), ResetTrigger), nil
	}
	return Pass, fmt.Sprintf("Stateless Reset of %d bytes for a %d-byte packet of an unknown connection (token %s)", len(raw), ResetTrigger, ev.ResetToken), nil
}
