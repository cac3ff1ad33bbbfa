package selfcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// pingLoss runs ping in l's namespace and returns (sent, received) and the output.
func pingLoss(t *testing.T, l shaping.Link, args ...string) (int, int, string) {
	t.Helper()
	return runPing(t, l, "ping", args...)
}

// pingRealtime is pingLoss with ping at SCHED_FIFO priority 50 (chrt; below the emulator's
// forwarders, 89), for a test that judges the RTTs ping reports: ping stamps each echo in user
// space before it sends it, so an ordinary ping preempted on a busy machine between the stamp
// and the send reports the wait as RTT (89.48 ms against a range up to 80 on 2026-12-07, the
// emulator on time within 0.64 ms, beside a compile), as the link check's own probes avoid by
// running on real-time threads.
func pingRealtime(t *testing.T, l shaping.Link, args ...string) (int, int, string) {
	t.Helper()
	if _, err := exec.LookPath("chrt"); err != nil {
		t.Fatal("chrt is missing: run make deps (util-linux)")
	}
	return runPing(t, l, "chrt", append([]string{"-f", "50", "ping"}, args...)...)
}

func runPing(t *testing.T, l shaping.Link, name string, args ...string) (int, int, string) {
	t.Helper()
	if _, err := exec.LookPath("ping"); err != nil {
		t.Fatal("ping is missing: run make deps")
	}
	out, _ := shaping.Command(context.Background(), l, name, append(args, l.HostAddr().String())...).CombinedOutput()
	m := regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no ping summary: %s", out)
	}
	sent, _ := strconv.Atoi(m[1])
	got, _ := strconv.Atoi(m[2])
	return sent, got, string(out)
}

// TestIntegrationBurstyLossPing cross-checks the emulator's loss counters with ping: every
// echo that ping misses was dropped in exactly one direction by the Gilbert model.
func TestIntegrationBurstyLossPing(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rate=10mbit,rtt=20ms,loss=10%,burst=3")
	l.TakeCounters()
	sent, got, _ := pingLoss(t, l, "-c", "300", "-i", "0.005", "-W", "1")
	c := l.TakeCounters()
	lost := int64(sent - got)
	if drops := c.Up.DropsLoss + c.Down.DropsLoss; drops != lost || lost == 0 {
		t.Fatalf("ping lost %d of %d, emulator dropped %d (up %d, down %d)", lost, sent, drops, c.Up.DropsLoss, c.Down.DropsLoss)
	}
	if c.Up.LossBursts == 0 || c.Up.LossBurstMean <= 1 {
		t.Errorf("up bursts %d, mean %.2f: the Gilbert model made no bursts", c.Up.LossBursts, c.Up.LossBurstMean)
	}
	t.Logf("ping lost %d/%d; up %d drops in %d bursts (mean %.2f), down %d in %d", lost, sent, c.Up.DropsLoss, c.Up.LossBursts, c.Up.LossBurstMean, c.Down.DropsLoss, c.Down.LossBursts)
}

// TestIntegrationOutagePing: every echo lost on an outage link was dropped by an outage.
func TestIntegrationOutagePing(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rate=10mbit,rtt=20ms,outage=700ms/300ms")
	l.TakeCounters()
	sent, got, _ := pingLoss(t, l, "-c", "100", "-i", "0.02", "-W", "1")
	c := l.TakeCounters()
	lost := int64(sent - got)
	if drops := c.Up.DropsOutage + c.Down.DropsOutage; drops != lost || lost == 0 || c.Up.DropsLoss+c.Down.DropsLoss != 0 {
		t.Fatalf("ping lost %d of %d, outage drops %d: %+v", lost, sent, drops, c)
	}
	t.Logf("ping lost %d of %d (30 %% of the time down)", lost, sent)
}

// TestIntegrationDelayVarPing: ping's RTTs stay within RTT +- 2 x delayvar and spread. Above,
// an echo may also carry what the emulator measured of its own release lateness in each
// direction (Down and Up TimingErrMaxMs: a release late within the bound delays the echo by it,
// once each way) and 5 ms of ping's own timing. A ping made while the emulator was late (a
// packet left over its bound after its time: a host stall, result.Emulator.Late) is not judged:
// it is made once more, by the one retry rule (result.Retry), and one late on both attempts is
// logged as lost to host stalls. Fresh-clone make tests on a quiet machine on 2026-12-07 saw
// one echo at 92.42 ms, and one at 90.36 ms with the emulator 4.93 ms late (under its 5 ms
// bound), against the fixed 85 ms this test allowed before: a release late within the bound
// each way can add up to twice the bound.
func TestIntegrationDelayVarPing(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rtt=60ms,delayvar=10ms,delayvar_every=50ms")
	var lo, hi float64
	var c *result.Emulator
	above := func() float64 { return 80 + 5 + c.Down.TimingErrMaxMs + c.Up.TimingErrMaxMs }
	inRange := func() bool { return lo >= 40-0.2 && hi <= above() && hi-lo >= 10 }
	attempts, _ := result.Retry(func(int) (bool, error) {
		l.TakeCounters()
		_, _, out := pingRealtime(t, l, "-c", "100", "-i", "0.01")
		c = l.TakeCounters()
		m := regexp.MustCompile(`= ([\d.]+)/([\d.]+)/([\d.]+)/`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no rtt summary: %s", out)
		}
		lo, _ = strconv.ParseFloat(m[1], 64)
		hi, _ = strconv.ParseFloat(m[3], 64)
		if !inRange() && c.Late() {
			t.Logf("ping RTT %.2f..%.2f ms while %s: made once more", lo, hi, c.LateReason(""))
			return true, nil
		}
		return false, nil
	})
	switch {
	case !inRange() && c.Late():
		t.Logf("ping lost to host stalls (the emulator late on all %d attempts): %s", attempts, c.LateReason(""))
	case !inRange():
		t.Fatalf("ping RTT %.2f..%.2f ms, want within 40..%.2f ms and spread >= 10 ms (the emulator on time: late %.2f ms down, %.2f ms up, bound %.2f ms)", lo, hi, above(), c.Down.TimingErrMaxMs, c.Up.TimingErrMaxMs, c.LateBound())
	default:
		t.Logf("ping RTT %.2f..%.2f ms (within 40..%.2f); reordered up %d down %d; attempts %d", lo, hi, above(), c.Up.Reordered, c.Down.Reordered, attempts)
	}
}

// iperf3 runs an iperf3 client in l's namespace against a server on the host address and
// returns the parsed JSON end summary.
func iperf3(t *testing.T, l shaping.Link, args ...string) map[string]any {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Fatal("iperf3 is missing: run make deps")
	}
	port := strconv.Itoa(20000 + os.Getpid()%20000)
	srv := exec.Command("iperf3", "-s", "-1", "-B", l.HostAddr().String(), "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	var out []byte
	var err error
	for i := 0; i < 50; i++ { // the server needs a moment to listen
		out, err = shaping.Command(context.Background(), l, "iperf3", append([]string{"-J", "-c", l.HostAddr().String(), "-p", port}, args...)...).Output()
		if err == nil || !bytes.Contains(out, []byte("unable to connect")) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	srv.Wait()
	var res map[string]any
	if jerr := json.Unmarshal(out, &res); jerr != nil || err != nil {
		t.Fatalf("iperf3: %v %v: %s", err, jerr, out)
	}
	return res["end"].(map[string]any)
}

func bitsPerSecond(end map[string]any, key string) float64 {
	return end[key].(map[string]any)["bits_per_second"].(float64)
}

// TestIntegrationTraceIperf: a UDP flood over a 12.032 Mbit/s trace is delivered at the
// trace's mean rate (iperf3's receiver count).
func TestIntegrationTraceIperf(t *testing.T) {
	linktest.NeedRoot(t)
	dir := t.TempDir()
	ms, _ := linkspec.GenerateTrace("12.032mbit")
	var b bytes.Buffer
	linkspec.WriteTrace(&b, ms)
	path := filepath.Join(dir, "12.trace")
	os.WriteFile(path, b.Bytes(), 0o644)
	l := openLink(t, "down=trace:"+path+",up=100mbit,rtt=20ms")
	l.TakeCounters()
	t0 := time.Now()
	end := iperf3(t, l, "-R", "-u", "-b", "20M", "-t", "3", "-l", "1200")
	c := l.TakeCounters()
	t.Logf("emulator down over %v: in %d out %d (%d B) queue drops %d other %d, timing err p99 %.3f max %.3f ms", time.Since(t0), c.Down.PacketsIn, c.Down.PacketsOut, c.Down.BytesOut, c.Down.DropsQueue, c.Down.DropsOther, c.Down.TimingErrP99Ms, c.Down.TimingErrMaxMs)
	got := bitsPerSecond(end, "sum_received")
	// iperf3 counts UDP payload: 1200 of 1228 IP bytes. Its receiver interval includes the
	// start, and a loaded machine delays the receiver: -7 % .. +1 %.
	want := 12.032e6 * 1200 / 1228
	t.Logf("UDP over the trace: %.3f Mbit/s of payload received, %.3f expected", got/1e6, want/1e6)
	if got > 1.01*want {
		t.Fatalf("delivered %.3f Mbit/s, more than the trace's %.3f", got/1e6, want/1e6)
	}
	// The rate is judged whatever the emulator's lateness: a starved forwarder that reads
	// packets late delivers the machine's rate, not the trace's (measured: 8.5 Mbit/s at load
	// average 24), and that is a failure of the emulated link, which this test must report
	// rather than pass; the lateness is named in the message to tell the cause.
	if got < 0.93*want {
		t.Fatalf("delivered %.3f Mbit/s, want %.3f (-7%% .. +1%%); emulator release lateness p99 %.2f ms", got/1e6, want/1e6, c.Down.TimingErrP99Ms)
	}
}

// TestIntegrationCoDelIperf: a TCP flow through CoDel with ECN in the client namespace:
// CoDel marks instead of dropping and the queueing delay stays near its 5 ms target while the
// link stays full.
func TestIntegrationCoDelIperf(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rate=20mbit,rtt=40ms,aqm=codel,ecn=true")
	if out, err := shaping.Command(context.Background(), l, "sysctl", "-w", "net.ipv4.tcp_ecn=1").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	l.TakeCounters()
	end := iperf3(t, l, "-t", "4", "-C", "cubic")
	c := l.TakeCounters()
	bps := bitsPerSecond(end, "sum_received")
	t.Logf("TCP up through CoDel: %.2f Mbit/s; queue delay p50 %.2f ms p99 %.2f ms; CE marks %d, AQM drops %d, tail drops %d",
		bps/1e6, c.Up.QueueDelayP50Ms, c.Up.QueueDelayP99Ms, c.Up.MarksCE, c.Up.DropsAQM, c.Up.DropsQueue)
	if c.Up.MarksCE == 0 || c.Up.DropsQueue != 0 {
		t.Errorf("CE marks %d, tail drops %d: want marks and no tail drops", c.Up.MarksCE, c.Up.DropsQueue)
	}
	if c.Up.QueueDelayP50Ms > 15 {
		t.Errorf("median queueing delay %.2f ms: CoDel should hold it near 5 ms", c.Up.QueueDelayP50Ms)
	}
	// Judged whatever the emulator's lateness (a late emulator must not switch its own check
	// off); the lateness is named to tell the cause.
	if bps < 0.8*20e6*1448/1500 {
		t.Errorf("goodput %.2f Mbit/s: the link was not kept full; emulator release lateness p99 %.2f ms", bps/1e6, c.Up.TimingErrP99Ms)
	}
}

// TestIntegrationCheckUnmeasurable: at 99 % loss the check ends with a table whose TCP lines
// say "not measurable at this setting", not with a dial error (issue 11 item 13).
func TestIntegrationCheckUnmeasurable(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rate=10mbit,rtt=20ms,loss=99%")
	res, err := Run(context.Background(), l, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, line := range res.Lines {
		t.Logf("%-40s %-20s %-50s %v", line.Name, line.Configured, line.Measured, line.Pass)
		found = found || strings.Contains(line.Measured, "not measurable at this setting")
	}
	if !found {
		t.Fatal("no 'not measurable at this setting' line")
	}
	// Almost every idle probe is lost at 99 %: a check that measured next to nothing must not
	// pass (an unanswered probe used to count as a pass).
	if res.Pass {
		t.Error("a link that lost its probes passed its self-check")
	}
}

// TestIntegrationCheckLongRTT: at rtt=10s the quick check is bounded (about one RTT of probes,
// no TCP transfer that could not reach the rate) and an interrupt ends it within 2 s
// (issue 11 item 14).
func TestIntegrationCheckLongRTT(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rate=10mbit,rtt=10s")
	start := time.Now()
	res, err := Run(context.Background(), l, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	for _, line := range res.Lines {
		t.Logf("%-40s %-20s %-50s %v", line.Name, line.Configured, line.Measured, line.Pass)
	}
	if took > 40*time.Second {
		t.Errorf("quick check at rtt=10s took %v", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, l, Options{}); done <- err }()
	time.Sleep(3 * time.Second)
	cancel()
	stopped := time.Now()
	select {
	case err := <-done:
		if err == nil {
			t.Error("interrupted check returned no error")
		}
		t.Logf("check took %v to stop after the interrupt; quick check %v", time.Since(stopped), took)
	case <-time.After(2 * time.Second):
		t.Fatal("check still running 2 s after the interrupt")
	}
}

var _ = fmt.Sprint

// TestIntegrationCheckImpairmentLines: the self-check judges a bursty link (carlucci2015 with 2 %
// loss in bursts of 4, which used to be "advisory") and a delay-variation link (112J50) on their
// merits: their model lines (loss rate, burst count and mean length; the one-way delay
// distribution and the RFC 4737 reordering) are present, judged and passed through the real
// emulator. The idle and TCP lines are left out of this test: they are tested on their own and a
// stall of a busy machine may fail them. About 25 s.
func TestIntegrationCheckImpairmentLines(t *testing.T) {
	linktest.NeedRoot(t)
	for _, tc := range []struct {
		link  string
		lines []string
	}{
		{"carlucci2015,loss=2%,burst=4", []string{"loss down", "loss bursts down (count)", "loss bursts down (mean length)", "loss up", "loss bursts up (count)", "loss bursts up (mean length)"}},
		{"rate=10mbit,rtt=112ms,queue=2bdp,down.delayvar=50ms", []string{"delay variation down (one-way delays)", "reordered-packet ratio down (RFC 4737)"}},
	} {
		t.Run(tc.link, func(t *testing.T) {
			l := openLink(t, tc.link)
			res, err := Run(context.Background(), l, Options{Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.lines {
				found := false
				for _, line := range res.Lines {
					if strings.HasPrefix(line.Name, want) {
						found = true
						t.Logf("%-40s %-30s %-40s %-60s %v", line.Name, line.Configured, line.Measured, line.Tolerance, line.Pass)
						if !line.Pass || strings.Contains(line.Tolerance, "informational") {
							t.Errorf("line %q: %s against %s (%s): want a judged pass", line.Name, line.Measured, line.Configured, line.Tolerance)
						}
					}
				}
				if !found {
					t.Errorf("no %q line", want)
				}
			}
		})
	}
}

// TestIntegrationCheckCorruption: the corruption lines of links corrupting 30 % and 2 % each
// way are present, judged and passed through the real emulator (the stream's probes see their
// payload changed; the emulator's counters saw at least as many corrupted packets). About 20 s.
func TestIntegrationCheckCorruption(t *testing.T) {
	linktest.NeedRoot(t)
	for _, link := range []string{"rate=10mbit,rtt=30ms,corrupt=30%", "rate=10mbit,rtt=30ms,corrupt=2%"} {
		t.Run(link, func(t *testing.T) {
			l := openLink(t, link)
			res, err := Run(context.Background(), l, Options{Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, line := range res.Lines {
				t.Logf("%-45s %-22s %-32s %-45s %v", line.Name, line.Configured, line.Measured, line.Tolerance, line.Pass)
				if strings.HasPrefix(line.Name, "corruption ") {
					found++
					if !line.Pass {
						t.Errorf("line %q: %s against %s (%s): want a pass", line.Name, line.Measured, line.Configured, line.Tolerance)
					}
				}
			}
			if found != 2 {
				t.Errorf("%d corruption lines, want 2 (up, down)", found)
			}
		})
	}
}

// TestIntegrationBleachLine runs the ECN bleaching step alone over real emulated links: a
// bleaching way delivers every ECT(0) datagram Not-ECT and counts each, the other way keeps
// ECT(0) and counts none; behind a NAT that rebinds once, the echoes to the old binding are
// lost and the rest keep their mark.
func TestIntegrationBleachLine(t *testing.T) {
	linktest.NeedRoot(t)
	for _, link := range []string{"rate=10mbit,rtt=30ms,bleach=ecn", "rate=10mbit,rtt=30ms,down.bleach=ecn", "rate=10mbit,rtt=30ms,up.bleach=ecn,rebind=port@200ms/0s"} {
		t.Run(link, func(t *testing.T) {
			l := openLink(t, link)
			c := &checker{l: l, spec: l.Spec(), quick: true, reclaimStart: -1}
			if err := c.bleach(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(c.res.Lines) != 1 {
				t.Fatalf("%d lines, want 1", len(c.res.Lines))
			}
			line := c.res.Lines[0]
			t.Logf("%s | %s | %s | %s | %v", line.Name, line.Configured, line.Measured, line.Tolerance, line.Pass)
			want := map[bool]string{true: "100 of 100 received: 100 Not-ECT, 0 ECT(0), 0 ECT(1), 0 CE, 0 unread; 100 bleached",
				false: "100 of 100 received: 0 Not-ECT, 100 ECT(0), 0 ECT(1), 0 CE, 0 unread; 0 bleached"}
			s := l.Spec()
			down := "down " + want[s.DownImp.BleachECN]
			if s.Rebind.Enabled() {
				down = "0 Not-ECT, " // some echoes went to the old binding
			}
			if !line.Pass || !strings.Contains(line.Measured, down) || !strings.Contains(line.Measured, "up "+want[s.UpImp.BleachECN]) {
				t.Errorf("line %q: %s (%s): want a pass, every datagram each way", line.Name, line.Measured, line.Tolerance)
			}
		})
	}
}
