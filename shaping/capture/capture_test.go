package capture

import (
	"bytes"
	"hash/maphash"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/pcapng"
)

// TestCapture drives a capture's Tap as the forwarders do and reads the file back: one packet
// per delivery (exit instant, with its time in the bottleneck) or drop (entry instant, cause, on
// a LINKTYPE_USER0 interface), the key log in a DSB before the packets, and nothing lost.
func TestCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "link.pcapng")
	c, err := Start(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	a, b, big := []byte("packet A"), []byte("packet B"), bytes.Repeat([]byte{7}, 1500)
	c.Tap(TapDown, t0, a, TapEnter)
	c.Tap(TapUp, t0.Add(time.Millisecond), b, TapEnter)
	c.Tap(TapDown, t0.Add(2*time.Millisecond), big, TapDropQueue)
	c.Tap(TapUp, t0.Add(3*time.Millisecond), b, TapDropLoss)
	c.Tap(TapDown, t0.Add(25*time.Millisecond), a, TapExit)
	c.Tap(TapUp, t0.Add(26500*time.Microsecond), b, TapExit)
	c.Tap(TapUp, t0.Add(30*time.Millisecond), []byte("never entered"), TapExit)
	st, err := c.Stop([]byte("CLIENT_RANDOM 01 02\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.Tap(TapDown, t0, a, TapExit) // after stop: ignored, no panic
	if st.Packets != 5 || st.Lost != 0 || st.Bytes == 0 {
		t.Errorf("stats %+v, want 5 packets, 0 lost", st)
	}
	if _, err := os.Stat(path + ".part"); !os.IsNotExist(err) {
		t.Errorf("spool file left: %v", err)
	}
	f := readCapture(t, path)
	if len(f.Secrets) != 1 || string(f.Secrets[0].Data) != "CLIENT_RANDOM 01 02\n" {
		t.Errorf("secrets %+v", f.Secrets)
	}
	want := []struct {
		iface   string
		at      time.Duration
		comment string
		caplen  int
	}{
		{"down-dropped", 2 * time.Millisecond, "dropped: droptail queue full", len(big)},
		{"up-dropped", 3 * time.Millisecond, "dropped: random loss", len(b)},
		{"down", 25 * time.Millisecond, "entered the bottleneck 25.000 ms earlier", len(a)},
		{"up", 26500 * time.Microsecond, "entered the bottleneck 25.500 ms earlier", len(b)},
		{"up", 30 * time.Millisecond, "", 13},
	}
	if len(f.Packets) != len(want) {
		t.Fatalf("%d packets, want %d", len(f.Packets), len(want))
	}
	for i, p := range f.Packets {
		w := want[i]
		if name := f.Interfaces[p.Interface].Name; name != w.iface || p.Time.Sub(t0) != w.at || p.Comment != w.comment || len(p.Data) != w.caplen {
			t.Errorf("packet %d: %s at %v %q %d bytes; want %s at %v %q %d bytes", i, name, p.Time.Sub(t0), p.Comment, len(p.Data), w.iface, w.at, w.comment, w.caplen)
		}
	}
	if f.Interfaces[2].LinkType != pcapng.LinkTypeUser0 || f.Interfaces[0].LinkType != pcapng.LinkTypeRaw {
		t.Errorf("link types %d, %d: want drops out of TCP analysis (USER0) and raw IP for the rest", f.Interfaces[2].LinkType, f.Interfaces[0].LinkType)
	}
}

// TestCaptureStartError: a capture into a missing directory fails with the path in the error.
func TestCaptureStartError(t *testing.T) {
	_, err := Start(filepath.Join(t.TempDir(), "missing", "x.pcapng"))
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("error %v, want one naming the path", err)
	}
}

func readCapture(t *testing.T, path string) *pcapng.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := pcapng.Read(fh)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// BenchmarkCaptureTap is the cost a capture adds on a forwarding thread per packet event (1500 B
// packets, alternating entry and exit, the writer goroutine draining to a file).
func BenchmarkCaptureTap(b *testing.B) {
	c, err := Start(filepath.Join(b.TempDir(), "b.pcapng"))
	if err != nil {
		b.Fatal(err)
	}
	pkt := bytes.Repeat([]byte{1}, 1500)
	now := time.Now()
	b.SetBytes(1500)
	b.ResetTimer()
	for i := range b.N {
		ev := TapEnter
		if i%2 == 1 {
			ev = TapExit
		}
		c.Tap(TapDown, now, pkt, ev)
	}
	b.StopTimer()
	st, err := c.Stop(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(st.Lost)/float64(b.N), "lost/op")
}

// TestCaptureStopWhileTapping stops a capture while two forwarders still tap (run with -race):
// no panic, no race, and every event is either written, counted as lost or ignored after stop.
func TestCaptureStopWhileTapping(t *testing.T) {
	c, err := Start(filepath.Join(t.TempDir(), "c.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, dir := range []TapDir{TapDown, TapUp} {
		wg.Go(func() {
			pkt := []byte("payload")
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				c.Tap(dir, time.Now(), pkt, TapEvent(i%2)*TapExit)
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	st, err := c.Stop(nil)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.Packets == 0 {
		t.Errorf("stats %+v: nothing written", st)
	}
}

// BenchmarkCaptureTapOnly is what a capture adds on a forwarding thread per packet event, without
// a writer competing for the CPU (the ring is emptied in place): half entries (hashed), half
// exits (copied), 1500-byte packets.
func BenchmarkCaptureTapOnly(b *testing.B) {
	c := &Session{seed: maphash.MakeSeed()}
	c.rings[0].slots = make([]capPkt, captureRing)
	c.on.Store(true)
	pkt := bytes.Repeat([]byte{1}, 1500)
	now := time.Now()
	b.SetBytes(1500)
	for i := 0; b.Loop(); i++ {
		c.Tap(TapDown, now, pkt, TapEvent(i%2)*TapExit)
		if i%1024 == 1023 {
			c.rings[0].head.Store(c.rings[0].tail.Load())
		}
	}
	if c.lost.Load() != 0 {
		b.Fatalf("%d lost", c.lost.Load())
	}
}
