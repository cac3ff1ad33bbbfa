package selfcheck

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

func TestStreamPayloadSurvivesOneBitFlip(t *testing.T) {
	sent := time.Unix(1765000000, 123456789)
	b := make([]byte, streamPacket)
	encodeStream(b, 4242, sent)
	if seq, at, bad, ok := decodeStream(b); !ok || bad || seq != 4242 || !at.Equal(sent) {
		t.Fatalf("clean payload: seq %d, sent %v, corrupted %v, ok %v", seq, at, bad, ok)
	}
	for bit := range 8 * len(b) {
		b[bit/8] ^= 0x80 >> (bit % 8)
		seq, at, bad, ok := decodeStream(b)
		b[bit/8] ^= 0x80 >> (bit % 8)
		if !ok || !bad || seq != 4242 || !at.Equal(sent) {
			t.Fatalf("bit %d flipped: seq %d, sent %v, corrupted %v, ok %v", bit, seq, at, bad, ok)
		}
	}
	if _, _, _, ok := decodeStream(b[:streamRecords-1]); ok {
		t.Fatal("a payload shorter than the records decoded")
	}
}

// udpPacket wraps payload in an IPv4/UDP packet the emulator can corrupt.
func udpPacket(buf, payload []byte) []byte {
	b := buf[:28+len(payload)]
	clear(b[:28])
	b[0], b[8], b[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	binary.BigEndian.PutUint16(b[24:], uint16(8+len(payload)))
	copy(b[28:], payload)
	return b
}

// fakeStream sends n stream packets through an in-process emulator pipe of cfg (the fake link)
// and returns what arrived, decoded as stream's receiver does; no real timing.
func fakeStream(t *testing.T, n int, cfg emu.Config) []arrival {
	t.Helper()
	p := emu.NewPipe(cfg)
	payload := make([]byte, streamPacket)
	var got []arrival
	for i := range n {
		encodeStream(payload, i, time.Unix(0, int64(i)*int64(time.Millisecond)))
		p.Offer(time.Duration(i), udpPacket(p.Buffer(), payload))
		for b, ok := p.Pop(time.Duration(i)); ok; b, ok = p.Pop(time.Duration(i)) {
			seq, sent, bad, ok := decodeStream(b[28:])
			if !ok || seq != i {
				t.Fatalf("packet %d decoded as %d (ok %v)", i, seq, ok)
			}
			got = append(got, arrival{seq: seq, sent: sent, recv: sent, corrupted: bad})
			p.Recycle(b)
		}
	}
	return got
}

func TestCorruptLine(t *testing.T) {
	for _, tc := range []struct {
		name, link string
		n          int
		cfg        emu.Config
		pass       bool
		note       string
	}{
		{"30% as specified", "rate=10mbit,rtt=30ms,corrupt=30%", 1000, emu.Config{Corrupt: 0.3, Seed: 3}, true, "exact binomial 99%"},
		{"2% as specified", "rate=10mbit,rtt=30ms,corrupt=2%", 3000, emu.Config{Corrupt: 0.02, Seed: 4}, true, "exact binomial 99%"},
		{"2% with loss", "rate=10mbit,rtt=30ms,corrupt=2%,loss=5%", 3000, emu.Config{Corrupt: 0.02, Loss: 0.05, Seed: 5}, true, "exact binomial 99%"},
		{"does not corrupt", "rate=10mbit,rtt=30ms,corrupt=30%", 1000, emu.Config{Seed: 3}, false, "exact binomial 99%"},
		{"corrupts too little", "rate=10mbit,rtt=30ms,corrupt=2%", 3000, emu.Config{Corrupt: 0.005, Seed: 6}, false, "exact binomial 99%"},
		{"corrupts too much", "rate=10mbit,rtt=30ms,corrupt=2%", 3000, emu.Config{Corrupt: 0.04, Seed: 7}, false, "exact binomial 99%"},
		{"too small a sample", "rate=10mbit,rtt=30ms,corrupt=2%", 500, emu.Config{Corrupt: 0.02, Seed: 8}, false, "run a longer check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testChecker(tc.link, true)
			got := fakeStream(t, tc.n, tc.cfg)
			c.corruptLine(true, got)
			if len(c.res.Lines) != 1 {
				t.Fatalf("%d lines, want 1: %+v", len(c.res.Lines), c.res.Lines)
			}
			l := c.res.Lines[0]
			t.Logf("%s | %s | %s | %s | pass %v", l.Name, l.Configured, l.Measured, l.Tolerance, l.Pass)
			if l.Pass != tc.pass || !strings.Contains(l.Tolerance, tc.note) {
				t.Fatalf("line %+v: want pass %v, tolerance naming %q", l, tc.pass, tc.note)
			}
		})
	}
	// The stream of a corrupting link's quick check is long enough for the line.
	c := testChecker("rate=10mbit,rtt=30ms,corrupt=2%", true)
	if n, _ := c.streamShape(true); float64(n)*0.02 < minLossEvents {
		t.Errorf("a 2%% corrupting link's stream of %d packets expects %.1f corrupted, need %d", n, float64(n)*0.02, minLossEvents)
	}
	if c := testChecker("rate=10mbit,rtt=30ms", true); len(c.res.Lines) != 0 {
		t.Fatal("lines before any check")
	} else if c.corruptLine(true, nil); len(c.res.Lines) != 0 {
		t.Errorf("a link without corruption got a corruption line: %+v", c.res.Lines)
	}
}

func TestBinomialPMF(t *testing.T) {
	pl := binomialPMF(1000, 0.3)
	sum := 0.0
	for _, q := range pl {
		sum += q
	}
	if sum < 0.999999 || sum > 1.000001 {
		t.Fatalf("pmf sums to %v", sum)
	}
	// B(1000, 0.3): mean 300, sd 14.49; the central 99 % interval is about 263..337.
	if lo, hi := pmfInterval(pl, 0.99); lo < 260 || lo > 265 || hi < 335 || hi > 340 {
		t.Fatalf("99%% interval %d..%d, want about 263..337", lo, hi)
	}
}

// TestLostProbesWithCorruption: a link corrupting 30 % each way spoils about 4.2 % of the idle
// probes (a bit in the type byte or sequence number); that many unanswered probes pass, 30 %
// do not.
func TestLostProbesWithCorruption(t *testing.T) {
	for _, tc := range []struct {
		lost int
		pass bool
	}{{0, true}, {3, true}, {9, true}, {30, false}} {
		c := testChecker("rate=10mbit,rtt=30ms,corrupt=30%", true)
		c.lostProbesLine(100, 100-tc.lost)
		if tc.lost == 0 {
			if len(c.res.Lines) != 0 {
				t.Errorf("no probe lost gave a line: %+v", c.res.Lines)
			}
			continue
		}
		if l := c.res.Lines[0]; l.Pass != tc.pass {
			t.Errorf("%d of 100 lost: %+v, want pass %v", tc.lost, l, tc.pass)
		}
	}
}
