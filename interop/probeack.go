package interop

import (
	"context"
	"fmt"
	"time"
)

// ACKOnlyRule is ack-only's rule, as RFC 9000 section 13.2.1 states it.
const ACKOnlyRule = "RFC 9000 sections 13.2.1 and 13.2: packets of only ACK (and PADDING) frames are not ack-eliciting, and an endpoint MUST NOT send a non-ack-eliciting packet in response to a non-ack-eliciting packet, even if there are packet gaps that precede the received packet (the probe completes a handshake, waits for quiet, skips a packet number, sends ACK-only 1-RTT packets after the gap and fails the server for any packet of only ACK frames that acknowledges one of them; acknowledging them inside an ack-eliciting packet is allowed; a PING after them must be acknowledged, as the control)"

// ACKOnlyCount is how many ACK-only 1-RTT packets ack-only sends, and ACKOnlyGap the time
// between them: several, so that a server acknowledging every second packet (RFC 9000 section
// 13.2.2) would show it.
const (
	ACKOnlyCount = 5
	ACKOnlyGap   = 20 * time.Millisecond
)

// probeACKOnly completes a handshake (connect), then with the connection quiet skips a packet
// number (so the server sees a gap before them) and sends ACKOnlyCount 1-RTT packets of one ACK frame each (acknowledging the server's packets so far),
// ACKOnlyGap apart, watches for t.Quiet, then sends a PING and waits t.Quiet for its
// acknowledgement, the control; the server's 1-RTT packets from the first ACK-only packet to
// the PING are judged by judgeACKOnly.
func probeACKOnly(ctx context.Context, t Target, ev *Observation) (Outcome, string, error) {
	s, err := newSession(t, ev)
	if err != nil {
		return Error, "", err
	}
	defer s.close()
	if out, reason, err := s.connect(ctx, t); out != "" || err != nil {
		return out, reason, err
	}
	mark := len(s.conn1.rx)
	ack := AppendACKRanges(nil, s.conn1.ranges(TypeShort))
	s.conn1.nextPN[TypeShort]++ // a gap before them (RFC 9000 section 12.3 lets a sender skip one)
	for range ACKOnlyCount {
		pn, err := s.send1RTT(ack)
		if err != nil {
			return Error, "", err
		}
		ev.ACKOnlySent = append(ev.ACKOnlySent, pn)
		if _, err := s.receive(ctx, 0, time.Now().Add(ACKOnlyGap), nil); err != nil {
			return Error, "", err
		}
	}
	if _, err := s.receive(ctx, 0, time.Now().Add(t.Quiet), nil); err != nil {
		return Error, "", err
	}
	replies := append([]rxPacket(nil), s.conn1.rx[mark:]...)
	ping, err := s.send1RTT([]byte{FramePing})
	if err != nil {
		return Error, "", err
	}
	acked := func(Datagram) bool { return acksAny(s.conn1.rx[mark:], []uint64{ping}) }
	if _, err := s.receive(ctx, t.Quiet, time.Now().Add(t.Quiet), acked); err != nil {
		return Error, "", err
	}
	control := acked(Datagram{})
	ev.ControlAnswered = &control
	out, reason, bad := judgeACKOnly(ev.ACKOnlySent, replies, control)
	ev.ACKOnlyReplies = bad
	return out, reason, nil
}

// acksAny reports whether a packet of ps carries an ACK frame whose ranges hold one of pns.
func acksAny(ps []rxPacket, pns []uint64) bool {
	for _, p := range ps {
		if len(ackedOf(p.Frames, pns)) > 0 {
			return true
		}
	}
	return false
}

// ackedOf returns the packet numbers of pns that an ACK frame of fs acknowledges.
func ackedOf(fs []Frame, pns []uint64) []uint64 {
	var out []uint64
	for _, pn := range pns {
	frames:
		for _, f := range fs {
			if f.Type != FrameACK && f.Type != FrameACKECN {
				continue
			}
			for _, r := range f.Ranges {
				if pn >= r[0] && pn <= r[1] {
					out = append(out, pn)
					break frames
				}
			}
		}
	}
	return out
}

// judgeACKOnly judges the server's 1-RTT packets received while the probe sent only the
// ACK-only packets sent (RFC 9000 section 13.2.1): a packet that is not ack-eliciting and
// acknowledges one of them is a non-ack-eliciting packet in response to a non-ack-eliciting
// one, a fail, with their packet numbers (also returned). Without the control (a PING after them
// acknowledged) silence proves nothing: error. Ack-eliciting packets, which may acknowledge
// the ACK-only packets, and ACK-only packets that acknowledge none of them are noted.
func judgeACKOnly(sent []uint64, replies []rxPacket, control bool) (Outcome, string, []uint64) {
	var bad, eliciting, other []uint64
	var evidence []string
	for _, p := range replies {
		switch acked := ackedOf(p.Frames, sent); {
		case AckEliciting(p.Frames):
			eliciting = append(eliciting, p.PN)
		case len(acked) > 0:
			bad = append(bad, p.PN)
			evidence = append(evidence, fmt.Sprintf("pn %d %v acknowledges %v", p.PN, frameNames(p.Frames), acked))
		default:
			other = append(other, p.PN)
		}
	}
	notes := fmt.Sprintf("ack-eliciting packets meanwhile %v, other non-ack-eliciting packets %v", eliciting, other)
	switch {
	case len(bad) > 0:
		return Fail, fmt.Sprintf("%d packets of only ACK frames answered the ACK-only packets %v: %v; %s", len(bad), sent, evidence, notes), bad
	case !control:
		return Error, fmt.Sprintf("no ACK-only answer to the ACK-only packets %v, but no ACK of the PING control either: the silence proves nothing; %s", sent, notes), nil
	}
	return Pass, fmt.Sprintf("no packet of only ACK frames answered the ACK-only packets %v; the PING control was acknowledged; %s", sent, notes), nil
}

// frameNames lists fs as their String()s.
func frameNames(fs []Frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}
