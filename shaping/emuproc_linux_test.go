package shaping

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
)

// threadPolicies reads the scheduling policy (proc(5) stat field 41) of every thread of pid.
func threadPolicies(t *testing.T, pid int) map[int]int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		tid, _ := strconv.Atoi(e.Name())
		out[tid], _ = strconv.Atoi(f[38]) // field 41, counted from field 3
	}
	return out
}

// TestIntegrationEmulatorProcess: in a program that called Child, an emu link's forwarders run
// in an emulator process whose every thread is SCHED_FIFO; the counters (recorded as "own"),
// a capture written by that process, per-flow counts kept there and copied back on detach, and
// its CPU time all reach the parent; Close ends the process and leaves nothing behind. With
// WithEmulatorProcess(false) the link runs in this process and says "shared".
func TestIntegrationEmulatorProcess(t *testing.T) {
	needRoot(t)
	testenv.Require(t, "ping")
	l := openLink(t, "rate=3mbit,rtt=20ms")
	el := l.(*EmuLink)
	if el.Process() != ProcessOwn || el.proc == nil {
		t.Fatalf("Process() = %q, want %q in a test binary whose TestMain calls Child", el.Process(), ProcessOwn)
	}
	pid := el.proc.cmd.Process.Pid
	pol := threadPolicies(t, pid)
	for tid, p := range pol {
		if p != 1 { // SCHED_FIFO
			t.Errorf("emulator process %d thread %d has policy %d, want SCHED_FIFO (1)", pid, tid, p)
		}
	}
	if len(pol) < 3 {
		t.Errorf("emulator process has %d threads, want at least the main one and two forwarders", len(pol))
	}
	pcap := filepath.Join(t.TempDir(), "link.pcapng")
	if err := el.StartCapture(pcap); err != nil {
		t.Fatal(err)
	}
	if err := el.StartCapture(pcap); err != capture.ErrRunning {
		t.Errorf("second StartCapture: %v, want capture.ErrRunning", err)
	}
	fc := capture.NewFlowCounter()
	el.CountFlows(fc)
	l.TakeCounters()
	out, err := Command(context.Background(), l, "ping", "-c", "4", "-i", "0.2", l.HostAddr().String()).CombinedOutput()
	if err != nil {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	c := l.TakeCounters()
	if c == nil || c.Process != ProcessOwn || c.Up.PacketsOut != 4 || c.Down.PacketsOut != 4 {
		t.Fatalf("counters %+v: want 4 packets each way, process %q", c, ProcessOwn)
	}
	st, err := el.StopCapture([]byte("CLIENT_RANDOM 00 00\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(pcap); err != nil || st.Packets != 8 || fi.Size() != st.Bytes {
		t.Errorf("capture: %+v, file %v %v; want 8 packets and the file's size", st, fi, err)
	}
	if _, err := el.StopCapture(nil); err != capture.ErrNotRunning {
		t.Errorf("second StopCapture: %v, want capture.ErrNotRunning", err)
	}
	el.CountFlows(nil) // ICMP is not counted per flow: the counter is empty, and local again
	if d, u := fc.All(); len(d)+len(u) != 0 {
		t.Errorf("flow counts after ping: %v %v, want none (ICMP)", d, u)
	}
	if cpu := el.EmulatorCPU(); cpu <= 0 || cpu > 5*time.Second {
		t.Errorf("EmulatorCPU = %v, want above 0", cpu)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("emulator process %d still there after Close", pid)
	}

	shared, err := Open(context.Background(), l.Spec(), WithEmulatorProcess(false))
	if err != nil {
		t.Fatal(err)
	}
	linktest.CloseAtEnd(t, shared.(*EmuLink))
	if p := shared.(*EmuLink).Process(); p != ProcessShared {
		t.Errorf("WithEmulatorProcess(false): Process() = %q, want %q", p, ProcessShared)
	}
	if c := shared.TakeCounters(); c == nil || c.Process != ProcessShared {
		t.Errorf("shared counters %+v, want process %q", c, ProcessShared)
	}
}

// TestIntegrationEmulatorProcessParentGone: the emulator process exits by itself when its
// parent's end of the socket closes (the parent killed: its descriptors close with it).
func TestIntegrationEmulatorProcessParentGone(t *testing.T) {
	needRoot(t)
	el := openLink(t, "rate=10mbit,rtt=10ms").(*EmuLink)
	el.proc.sock.Close()
	select {
	case <-el.proc.done:
		if el.proc.cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("emulator process exited with %v, want 0", el.proc.err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("emulator process still running 3 s after its parent's socket closed")
	}
}
