package emu

import "encoding/binary"

// markCE sets the ECN field of an IPv4 or IPv6 packet to Congestion Experienced (RFC 3168
// section 5) when it is ECN-capable (ECT(0), ECT(1) or already CE) and reports whether it did.
// For IPv4 the header checksum is updated incrementally (RFC 1624, equation 3); IPv6 has none.
func markCE(b []byte) bool {
	if len(b) < 20 {
		return false
	}
	switch b[0] >> 4 {
	case 4:
		ecn := b[1] & 3
		if ecn == 0 {
			return false
		}
		if ecn == 3 {
			return true
		}
		old := binary.BigEndian.Uint16(b[0:2])
		b[1] |= 3
		updateChecksum(b[10:12], old, binary.BigEndian.Uint16(b[0:2]))
		return true
	case 6:
		if len(b) < 40 {
			return false
		}
		ecn := (b[1] >> 4) & 3
		if ecn == 0 {
			return false
		}
		b[1] |= 0x30
		return true
	}
	return false
}

// bleachECN clears the ECN field of an IPv4 or IPv6 packet to Not-ECT (RFC 3168 section 5) and
// reports whether it was set (ECT(0), ECT(1) or CE) before. For IPv4 the header checksum is
// updated incrementally (RFC 1624, equation 3); IPv6 has none. It does not allocate.
func bleachECN(b []byte) bool {
	switch {
	case len(b) >= 20 && b[0]>>4 == 4:
		if b[1]&3 == 0 {
			return false
		}
		old := binary.BigEndian.Uint16(b[0:2])
		b[1] &^= 3
		updateChecksum(b[10:12], old, binary.BigEndian.Uint16(b[0:2]))
		return true
	case len(b) >= 40 && b[0]>>4 == 6:
		if b[1]&0x30 == 0 {
			return false
		}
		b[1] &^= 0x30
		return true
	}
	return false
}

// updateChecksum rewrites the ones'-complement checksum at sum after one 16-bit word of the
// covered data changed from old to new: HC' = ~(~HC + ~m + m') (RFC 1624 section 3).
func updateChecksum(sum []byte, old, new uint16) {
	s := uint32(^binary.BigEndian.Uint16(sum)) + uint32(^old) + uint32(new)
	s = (s & 0xffff) + s>>16
	s = (s & 0xffff) + s>>16
	binary.BigEndian.PutUint16(sum, ^uint16(s))
}

// flowHash hashes a packet's 5-tuple (source and destination address, protocol, and the ports
// of TCP, UDP, UDP-Lite, SCTP and DCCP) with FNV-1a (64 bits) perturbed by seed, as FQ-CoDel
// classifies flows (RFC 8290 section 4.1.1). Packets it cannot parse hash by their first bytes.
func flowHash(b []byte, seed uint64) uint64 {
	h := uint64(14695981039346656037) ^ seed
	var proto byte
	var l4 []byte
	switch {
	case len(b) >= 20 && b[0]>>4 == 4:
		ihl := int(b[0]&0x0f) * 4
		proto = b[9]
		h = fnv1a(h, b[12:20])
		if frag := binary.BigEndian.Uint16(b[6:8]) & 0x1fff; frag == 0 && ihl >= 20 && len(b) >= ihl+4 {
			l4 = b[ihl:]
		}
	case len(b) >= 40 && b[0]>>4 == 6:
		proto = b[6]
		h = fnv1a(h, b[8:40])
		l4 = b[40:]
	default:
		return fnv1a(h, b[:min(len(b), 20)])
	}
	h = (h ^ uint64(proto)) * 1099511628211
	switch proto {
	case 6, 17, 33, 132, 136:
		if len(l4) >= 4 {
			h = fnv1a(h, l4[:4])
		}
	}
	return h
}

// fnv1a folds p into the FNV-1a hash h.
func fnv1a(h uint64, p []byte) uint64 {
	for _, c := range p {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}
