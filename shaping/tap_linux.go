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

var _ capture.Capturer = (*EmuLink)(nil)

// StartCapture starts recording both directions of the link into the pcapng file path (see
// capture.Interfaces). Packets are copied on the forwarding threads and written by a separate
// goroutine, so the emulated link is not slowed down; events the writer cannot take are counted
// as capture.Stats.Lost. With an emulator process, that process writes the file. Errors: a
// capture already running, or the file cannot be created.
func (l *EmuLink) StartCapture(path string) error {
	if l.proc == nil {
		return l.fw.startCapture(path)
	}
	l.capMu.Lock()
	defer l.capMu.Unlock()
	if l.capturing {
		return capture.ErrRunning
	}
	if _, err := l.proc.call(emuReq{Op: opCaptureStart, Path: path}); err != nil {
		return err
	}
	l.capturing = true
	return nil
}

// StopCapture stops the running capture and completes its file with secrets (an NSS key log)
// as a Decryption Secrets Block before the packets, so Wireshark decrypts TLS and QUIC with no
// other file.
func (l *EmuLink) StopCapture(secrets []byte) (capture.Stats, error) {
	if l.proc == nil {
		return l.fw.stopCapture(secrets)
	}
	l.capMu.Lock()
	defer l.capMu.Unlock()
	if !l.capturing {
		return capture.Stats{}, capture.ErrNotRunning
	}
	l.capturing = false
	r, err := l.proc.call(emuReq{Op: opCaptureStop, Secrets: secrets})
	return r.Capture, err
}
