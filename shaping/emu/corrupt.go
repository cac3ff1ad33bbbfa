package emu

import (
	"encoding/binary"
	"math/rand/v2"
)

// Corruption flips one bit of a packet's transport payload and fixes the transport checksum, so
// that the damage reaches the endpoint's own integrity check (QUIC's AEAD, TLS's record MAC)
// instead of being discarded by the receiving kernel as a checksum error. This differs from
// tc-netem's corrupt, which flips one bit anywhere in the packet without touching any checksum
// (Linux net/sched/sch_netem.c, netem_enqueue), so most of its corrupted packets die in the
// receiver's IP, UDP or TCP checksum check and act as loss.
//
// Only packets that carry a transport payload can be corrupted: an unfragmented IPv4 packet, or
// an IPv6 packet whose first next header is UDP or TCP, with at least one payload byte. Each
// such packet is corrupted with the configured probability (Config.Corrupt); other packets
// (pure TCP acknowledgements, fragments, ICMP) are never drawn for, so the corrupted share of
// the eligible packets is the configured probability.

// transport locates the transport segment of an IPv4 or IPv6 packet: the offset of the UDP or
// TCP header, the offset of its payload, the segment's end and the protocol (6 or 17). ok is
// false for anything else (fragments, extension headers, truncated or malformed packets).
func transport(b []byte) (l4, payload, end int, proto byte, ok bool) {
	switch {
	case len(b) >= 20 && b[0]>>4 == 4:
		ihl := int(b[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(b[2:4]))
		if ihl < 20 || total < ihl || total > len(b) || binary.BigEndian.Uint16(b[6:8])&0x3fff != 0 {
			return 0, 0, 0, 0, false
		}
		l4, end, proto = ihl, total, b[9]
	case len(b) >= 40 && b[0]>>4 == 6:
		l4, end, proto = 40, 40+int(binary.BigEndian.Uint16(b[4:6])), b[6]
		if end > len(b) {
			return 0, 0, 0, 0, false
		}
	default:
		return 0, 0, 0, 0, false
	}
	switch proto {
	case 17:
		if end-l4 < 8 || l4+int(binary.BigEndian.Uint16(b[l4+4:l4+6])) != end {
			return 0, 0, 0, 0, false
		}
		payload = l4 + 8
	case 6:
		if end-l4 < 20 {
			return 0, 0, 0, 0, false
		}
		payload = l4 + int(b[l4+12]>>4)*4
		if payload < l4+20 || payload > end {
			return 0, 0, 0, 0, false
		}
	default:
		return 0, 0, 0, 0, false
	}
	return l4, payload, end, proto, true
}

// corruptPayload flips one bit, uniformly placed among the transport payload's bits, of the
// IP packet b, and updates the UDP or TCP checksum incrementally (RFC 1624 section 3) so that it
// stays valid. It reports whether b had a payload to corrupt (see transport). An IPv4 UDP
// checksum of 0 (none sent) stays 0. It does not allocate.
func corruptPayload(b []byte, rng *rand.Rand) bool {
	l4, payload, end, proto, ok := transport(b)
	if !ok || payload == end {
		return false
	}
	bit := rng.IntN((end - payload) * 8)
	pos := payload + bit/8
	mask := byte(0x80) >> (bit % 8)
	off := l4 + 16
	if proto == 17 {
		off = l4 + 6
	}
	sum := b[off : off+2]
	old := b[pos]
	b[pos] ^= mask
	if proto == 17 && binary.BigEndian.Uint16(sum) == 0 && b[0]>>4 == 4 {
		return true
	}
	// The checksum sums 16-bit words aligned on the transport header's start (the pseudo-header
	// is a whole number of words); a trailing odd byte is the high byte of a zero-padded word.
	oldW, newW := uint16(old), uint16(b[pos])
	if (pos-l4)%2 == 0 {
		oldW, newW = oldW<<8, newW<<8
	}
	updateChecksum(sum, oldW, newW)
	if proto == 17 && binary.BigEndian.Uint16(sum) == 0 {
		binary.BigEndian.PutUint16(sum, 0xffff) // RFC 768: a computed 0 is sent as all ones
	}
	return true
}
