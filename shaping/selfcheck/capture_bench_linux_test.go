package selfcheck

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/capture"
)

// BenchmarkLinkCapture measures what a pcapng capture costs the link (issue 14): TCP goodput,
// the emulator's release lateness p99 (both directions, worst of the two) and CPU, with and
// without capture, at carlucci2015 (3 Mbit/s) and at rate=1gbit,rtt=50ms; the whole process's CPU
// (forwarders, the in-process TCP sender and receiver, the capture writer); with capture also the
// packet events the writer could not take (lost) and the file's size. Root only. On a shared
// machine compare on and off runs made one after the other (results in BENCHMARKS.md).
func BenchmarkLinkCapture(b *testing.B) {
	for _, c := range []struct {
		name, spec string
		dur        time.Duration
	}{{"3mbit", "carlucci2015", 5 * time.Second}, {"1gbit", "rate=1gbit,rtt=50ms", 3 * time.Second}} {
		for _, Session := range []bool{false, true} {
			name := c.name + "/off"
			if Session {
				name = c.name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				l := benchLink(b, c.spec)
				el := l.(*shaping.EmuLink)
				var bps float64
				var cpu time.Duration
				var st capture.Stats
				var proc time.Duration
				for i := 0; i < b.N; i++ {
					if Session {
						if err := el.StartCapture(filepath.Join(b.TempDir(), "link.pcapng")); err != nil {
							b.Fatal(err)
						}
					}
					l.TakeCounters()
					ru0 := rusage()
					bps, cpu = bulkOnce(b, l, true, c.dur)
					proc = rusage() - ru0
					if Session {
						var err error
						if st, err = el.StopCapture(nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				e := l.TakeCounters()
				b.ReportMetric(bps/1e6, "Mbit/s")
				b.ReportMetric(max(e.Down.TimingErrP99Ms, e.Up.TimingErrP99Ms), "late-p99-ms")
				b.ReportMetric(cpu.Seconds()/c.dur.Seconds(), "emu-cpu-s/s")
				b.ReportMetric(proc.Seconds()/c.dur.Seconds(), "proc-cpu-s/s")
				b.ReportMetric(float64(st.Lost), "lost")
				b.ReportMetric(float64(st.Packets), "captured")
				b.ReportMetric(float64(st.Bytes)/1e6, "MB")
			})
		}
	}
}

// rusage is the CPU time (user + system) this process has used.
func rusage() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
