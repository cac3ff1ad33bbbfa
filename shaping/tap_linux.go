package shaping

import (
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

// tapped hands a packet to the forwarder's Tap, if one is set. It runs on the forwarding thread;
// the Tap copies what it keeps. A dropped packet's buffer is already recycled but not yet reused.
func (f *forwarder) tapped(now time.Duration, pkt []byte, ev TapEvent) {
	if f.capTap == nil {
		return
	}
	if t := f.capTap.Load(); t != nil {
		(*t)(f.dir, f.base.Add(now), pkt, ev)
	}
}

// tapEvent maps an emu.Verdict to the TapEvent of a packet entering the bottleneck.
func tapEvent(v emu.Verdict) TapEvent {
	switch v {
	case emu.DroppedLoss:
		return TapDropLoss
	case emu.DroppedFull:
		return TapDropQueue
	case emu.DroppedAQM:
		return TapDropAQM
	case emu.DroppedOutage:
		return TapDropOutage
	}
	return TapEnter
}

// setTaps connects both forwarders to l's tap slot.
func (l *EmuLink) setTaps() {
	l.down.capTap, l.down.dir = &l.tap, TapDown
	l.up.capTap, l.up.dir = &l.tap, TapUp
}

var _ Capturer = (*EmuLink)(nil)

// StartCapture starts recording both directions of the link into the pcapng file path (see
// CaptureInterfaces). Packets are copied on the forwarding threads and written by a separate
// goroutine, so the emulated link is not slowed down; events the writer cannot take are counted
// as CaptureStats.Lost. Errors: a capture already running, or the file cannot be created.
func (l *EmuLink) StartCapture(path string) error {
	l.capMu.Lock()
	defer l.capMu.Unlock()
	if l.cap != nil {
		return errCaptureRunning
	}
	c, err := newCapture(path)
	if err != nil {
		return err
	}
	l.cap = c
	t := Tap(c.tap)
	l.tap.Store(&t)
	return nil
}

// StopCapture stops the running capture and completes its file with secrets (an NSS key log)
// as a Decryption Secrets Block before the packets, so Wireshark decrypts TLS and QUIC with no
// other file.
func (l *EmuLink) StopCapture(secrets []byte) (CaptureStats, error) {
	l.capMu.Lock()
	defer l.capMu.Unlock()
	c := l.cap
	if c == nil {
		return CaptureStats{}, errNoCapture
	}
	l.tap.Store(nil)
	l.cap = nil
	return c.stop(secrets)
}
