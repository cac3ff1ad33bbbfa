package selfcheck

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

// A stream packet's payload (stream) carries its record, the sequence number (4 bytes) and the
// send time in ns (8 bytes), three times over (streamRecords), then zeros. The receiver takes each
// record byte by majority (bitwise 2 of 3), so a packet with one bit flipped anywhere in its
// payload by the link (corrupt=P%) still tells which packet it is and when it was sent, and it
// is known to be corrupted when the payload differs from the one its record gives.
const (
	streamRecord  = 12
	streamRecords = 3 * streamRecord
)

// encodeStream writes the payload of stream packet seq sent at sent into b (len >= streamRecords;
// bytes past the records are left as they are, zeros in stream).
func encodeStream(b []byte, seq int, sent time.Time) {
	binary.BigEndian.PutUint32(b, uint32(seq))
	binary.BigEndian.PutUint64(b[4:], uint64(sent.UnixNano()))
	copy(b[streamRecord:], b[:streamRecord])
	copy(b[2*streamRecord:], b[:streamRecord])
}

// decodeStream reads a stream packet's payload b: its sequence number and send time (by
// majority of the three records) and whether the payload differs from what the sender wrote.
// ok is false for a payload too short to be one.
func decodeStream(b []byte) (seq int, sent time.Time, corrupted, ok bool) {
	if len(b) < streamRecords {
		return 0, time.Time{}, false, false
	}
	var rec [streamRecord]byte
	for i := range rec {
		x, y, z := b[i], b[streamRecord+i], b[2*streamRecord+i]
		rec[i] = x&y | x&z | y&z
		corrupted = corrupted || x != rec[i] || y != rec[i] || z != rec[i]
	}
	for _, v := range b[streamRecords:] {
		corrupted = corrupted || v != 0
	}
	return int(binary.BigEndian.Uint32(rec[:])), time.Unix(0, int64(binary.BigEndian.Uint64(rec[4:]))), corrupted, true
}

// corruptLine judges a direction's corruption (corrupt=P%): every stream packet carries a
// payload, so each arrives corrupted with probability P, independently; the count of corrupted
// arrivals among the k distinct packets received must lie in the central 99 % interval of the
// exact binomial distribution B(k, P). A link that corrupts nothing, or far too much, fails; so
// does one whose corruption the probes cannot see (a stream too small to expect
// minLossEvents corrupted packets fails as "sample too small").
func (c *checker) corruptLine(down bool, got []arrival) {
	p := c.imp(down).Corrupt
	if p == 0 {
		return
	}
	seen := map[int]bool{}
	bad := 0
	for _, a := range got {
		if seen[a.seq] {
			continue
		}
		seen[a.seq] = true
		if a.corrupted {
			bad++
		}
	}
	k := len(seen)
	name := fmt.Sprintf("corruption %s (%d packets received)", dirName(down), k)
	conf := fmt.Sprintf("%.2f%%", p*100)
	measured := fmt.Sprintf("%.2f%% (%d corrupted)", 100*float64(bad)/float64(max(k, 1)), bad)
	if exp := p * float64(k); exp < minLossEvents {
		c.add(name, conf, measured, fmt.Sprintf("sample too small: %.1f corrupted packets expected, need %d: run a longer check", exp, minLossEvents), false)
		return
	}
	lo, hi := pmfInterval(binomialPMF(k, p), 0.99)
	c.add(name, conf, measured, fmt.Sprintf("%d..%d corrupted (exact binomial 99%%)", lo, hi), bad >= lo && bad <= hi)
}

// binomialPMF returns P(X = j), j = 0..n, of X ~ B(n, p), computed in logs (n up to millions).
func binomialPMF(n int, p float64) []float64 {
	out := make([]float64, n+1)
	switch {
	case p <= 0:
		out[0] = 1
		return out
	case p >= 1:
		out[n] = 1
		return out
	}
	lgn, _ := math.Lgamma(float64(n + 1))
	lp, lq := math.Log(p), math.Log1p(-p)
	for j := range out {
		a, _ := math.Lgamma(float64(j + 1))
		b, _ := math.Lgamma(float64(n - j + 1))
		out[j] = math.Exp(lgn - a - b + float64(j)*lp + float64(n-j)*lq)
	}
	return out
}

// probeSpoil is the chance that the link's corruption spoils an idle RTT probe's packet in a
// direction: its probePayload bytes carry the echo's type byte and the sequence number (bytes
// 0..4); the echo drops a request whose type byte changed and the prober waits in vain for a
// sequence number that changed, so a request is spoiled when its flipped bit falls in those 40
// of the payload's bits, an answer when it falls in the sequence number's 32 (rtProbe, rtEcho).
func (c *checker) probeSpoil(down bool) float64 {
	bits := 40.0
	if down {
		bits = 32
	}
	return c.imp(down).Corrupt * bits / (8 * probePayload)
}

// withSpoil is the chain g (or Bernoulli loss, when g has no P and R) of a direction that
// also spoils each packet, independently, with probability s: lost in either state with the
// complement of surviving both.
func withSpoil(g emu.GilbertElliott, s float64) emu.GilbertElliott {
	g.K1 = 1 - (1-g.K1)*(1-s)
	g.H1 = 1 - (1-g.H1)*(1-s)
	return g
}
