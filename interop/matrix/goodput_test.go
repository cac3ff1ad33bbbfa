package matrix

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/result"
)

// goodputWire is the capture of a goodput run that passed: one connection, its handshake
// completed, QUIC v1, the transfer 8856 ms from the client's first datagram to the last of the
// file's bytes (measured here: ngtcp2's server, the quic-go client).
func goodputWire() *interop.Wire {
	return &interop.Wire{Connections: 1, Handshakes: 1, Versions: []string{wireV1}, TransferMS: 8856}
}

// TestGoodputTransferTime: the capture's transfer time runs from the client's first delivered
// datagram (0.000 s) to the last server datagram with a request stream's STREAM frame
// (2.600 s); the client's later ACK and the dropped datagrams do not count.
func TestGoodputTransferTime(t *testing.T) {
	w, err := DecodeFields(strings.NewReader(timedCapture), false)
	if err != nil {
		t.Fatal(err)
	}
	if w.TransferMS != 2600 {
		t.Errorf("transfer %v ms, want 2600", w.TransferMS)
	}
}

// TestJudgeGoodput: the goodput case passes when the transfer completed correctly, its figure
// the file's bits over the capture's time (10 MiB in 8856 ms: 9.47 Mbit/s); a truncated
// transfer (built to fail: half the file saved) fails naming the bytes saved, and its figure is
// no measurement; a run during which the emulator was late beyond its bound keeps its outcome
// but its figure is not valid, the lateness named; without the link's counters neither.
func TestJudgeGoodput(t *testing.T) {
	whole := []interop.FileCheck{{Name: "1.bin", Bytes: GoodputFile, Got: GoodputFile, Match: true}}
	out, reason := judgeGoodput(goodputWire(), whole)
	if out != interop.Pass || reason != "the file whole (10485760 bytes) in 8856 ms: 9.47 Mbit/s" {
		t.Errorf("whole: %s %q", out, reason)
	}
	quiet := &result.Emulator{Down: result.Direction{TimingErrMaxMs: 1.2}, Up: result.Direction{TimingErrMaxMs: 0.4}}
	g := goodputOf(goodputWire(), whole, out, quiet, "")
	if !g.Valid || g.Bytes != GoodputFile || g.TimeMS != 8856 || g.Mbps < 9.4722 || g.Mbps > 9.4723 || g.LateMS != 1.2 || g.LateBoundMS != result.LatenessBoundMs {
		t.Errorf("whole: %+v", g)
	}

	truncated := []interop.FileCheck{{Name: "1.bin", Bytes: GoodputFile, Got: 5_000_000}}
	out, reason = judgeGoodput(goodputWire(), truncated)
	if out != interop.Fail || !strings.Contains(reason, "1.bin: 5000000 of 10485760 bytes saved") {
		t.Errorf("truncated: %s %q", out, reason)
	}
	g = goodputOf(goodputWire(), truncated, out, quiet, "")
	if g.Valid || g.Bytes != 0 || g.Mbps != 0 || g.InvalidReason != "the transfer did not complete correctly" {
		t.Errorf("truncated: %+v", g)
	}
	noTime := goodputWire()
	noTime.TransferMS = 0
	if out, reason := judgeGoodput(noTime, whole); out != interop.Fail || !strings.Contains(reason, "no transfer time") {
		t.Errorf("no transfer time: %s %q", out, reason)
	}

	lateEmu := &result.Emulator{Down: result.Direction{TimingErrMaxMs: 15.59}}
	g = goodputOf(goodputWire(), whole, interop.Pass, lateEmu, "machine: CPU 100 % busy")
	if g.Valid || !late(g) || g.Mbps == 0 || !strings.HasPrefix(g.InvalidReason, "emulator late: a packet left 15.59 ms after its time (down), bound 5.00 ms (machine: CPU 100 % busy)") {
		t.Errorf("late: %+v", g)
	}
	if g = goodputOf(goodputWire(), whole, interop.Pass, nil, ""); g.Valid || !strings.Contains(g.InvalidReason, "lateness is unknown") {
		t.Errorf("no counters: %+v", g)
	}
}

// TestGoodputCase: the case is the Interop Runner's: 10 MiB over 10 Mbit/s, 30 ms, a 25-packet
// droptail queue, a measurement, and named on the command line.
func TestGoodputCase(t *testing.T) {
	c, ok := LookupExchange("goodput")
	if !ok || !c.Goodput || c.Link != "rate=10mbit,rtt=30ms,queue=25pkt" || len(c.Files) != 1 || c.Files[0] != 10*1024*1024 || c.runs() != 1 {
		t.Fatalf("goodput case %+v", c)
	}
	if _, ex, err := ParseCases("goodput"); err != nil || len(ex) != 1 || ex[0].Name != "goodput" {
		t.Errorf("ParseCases(goodput): %v %v", ex, err)
	}
}
