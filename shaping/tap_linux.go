package shaping

import (
	"time"

	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
)

// tapped hands a packet to the forwarder's Tap, if one is set. It runs on the forwarding thread;
// the Tap copies what it keeps. A dropped packet's buffer is already recycled but not yet reused.
func (f *forwarder) tapped(now time.Duration, pkt []byte, ev capture.TapEvent) {
	if f.capTap == nil {
		return
	}
	if t := f.capTap.Load(); t != nil {
		(*t)(f.dir, f.base.Add(now), pkt, ev)
	}
}

// tapEvent maps an emu.Verdict to the TapEvent of a packet entering the bottleneck.
func tapEvent(v emu.Verdict) capture.TapEvent {
	switch v {
	case emu.DroppedLoss:
		return capture.TapDropLoss
	case emu.DroppedFull:
		return capture.TapDropQueue
	case emu.DroppedAQM:
		return capture.TapDropAQM
	case emu.DroppedOutage:
		return capture.TapDropOutage
	}
	return capture.TapEnter
}

// setTaps connects both forwarders to l's tap slot.
func (l *EmuLink) setTaps() {
	l.down.capTap, l.down.dir = &l.tap, capture.TapDown
	l.up.capTap, l.up.dir = &l.tap, capture.TapUp
}

var _ capture.Capturer = (*EmuLink)(nil)

// StartCapture starts recording both directions of the link into the pcapng file path (see
// capture.Interfaces). Packets are copied on the forwarding threads and written by a separate
// goroutine, so the emulated link is not slowed down; events the writer cannot take are counted
// as capture.Stats.Lost. Errors: a capture already running, or the file cannot be created.
func (l *EmuLink) StartCapture(path string) error {
	l.capMu.Lock()
	defer l.capMu.Unlock()
	if l.cap != nil {
		return capture.ErrRunning
	}
	c, err := capture.Start(path)
	if err != nil {
		return err
	}
	l.cap = c
	t := capture.Tap(c.Tap)
	l.tap.Store(&t)
	return nil
}

// StopCapture stops the running capture and completes its file with secrets (an NSS key log)
// as a Decryption Secrets Block before the packets, so Wireshark decrypts TLS and QUIC with no
// other file.
func (l *EmuLink) StopCapture(secrets []byte) (capture.Stats, error) {
	l.capMu.Lock()
	defer l.capMu.Unlock()
	c := l.cap
	if c == nil {
		return capture.Stats{}, capture.ErrNotRunning
	}
	l.tap.Store(nil)
	l.cap = nil
	return c.Stop(secrets)
}
