// Package capture records what crosses an emulated link: pcapng files of its packets (Tap, Session) and per-flow packet counts (FlowCounter).
//
// The emulator's forwarders (package shaping) call a Tap for every packet they handle; a
// Session copies those packets into lock-free rings on the forwarding threads and a writer
// goroutine writes them as a pcapng file (package shaping/pcapng) with four interfaces, the
// delivered and the dropped packets per direction (Interfaces). A FlowCounter attributes the
// packets offered to the link and those its model dropped to flows by IPv4 5-tuple.
package capture

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/pltlab/pltlab/shaping/pcapng"
)

// TapEvent is what happened to a packet at the bottleneck when a Tap saw it.
type TapEvent uint8

// Tap events.
const (
	// TapEnter: the packet entered the bottleneck (accepted into the droptail queue).
	TapEnter TapEvent = iota
	// TapDropLoss: the packet was dropped by the configured random loss on entry.
	TapDropLoss
	// TapDropQueue: the packet was dropped on entry because the droptail queue was full.
	TapDropQueue
	// TapExit: the packet left the link (after serialization and propagation delay).
	TapExit
	// TapDropAQM: the packet was dropped on arrival by the AQM (PIE).
	TapDropAQM
	// TapDropOutage: the packet was dropped because the link was in an outage.
	TapDropOutage
	// TapDropUnbound: the link delivered the packet and its NAT (rebind=) dropped it, addressed
	// to a client binding no longer in force; it shows as sent to that binding.
	TapDropUnbound
)

// dropCauses are the pcapng comments of the drop events.
var dropCauses = map[TapEvent]string{
	TapDropLoss:    "dropped: random loss",
	TapDropQueue:   "dropped: droptail queue full",
	TapDropAQM:     "dropped: AQM on arrival",
	TapDropOutage:  "dropped: link outage",
	TapDropUnbound: "dropped: NAT binding no longer in force (rebind)",
}

// TapDir is a direction of the link.
type TapDir uint8

// Directions.
const (
	// TapDown is towards the client (server to browser).
	TapDown TapDir = iota
	// TapUp is from the client (browser to server).
	TapUp
)

// Tap is called by an emulator forwarder, on its forwarding thread, for every packet it handles:
// dir, the instant (on the emulator's clock), the IP packet (valid only during the call: copy it)
// and what happened. A Tap must not block: it runs where packets cross the emulated link.
type Tap func(dir TapDir, at time.Time, pkt []byte, ev TapEvent)

// Capturer is a Link that can record its packets in pcapng files (the emu shaper does; netem and
// none do not). One capture runs at a time.
type Capturer interface {
	// StartCapture starts recording every packet of both directions into path.
	StartCapture(path string) error
	// StopCapture stops recording and completes the file with the TLS key log (NSS format)
	// embedded as a Decryption Secrets Block; secrets may be empty.
	StopCapture(secrets []byte) (Stats, error)
}

// Stats counts what a capture recorded.
type Stats struct {
	// Packets is the number of packets written (delivered and dropped).
	Packets int64
	// Lost is the number of packet events the writer could not keep up with and skipped (the link
	// itself is never slowed down by a capture); should be 0.
	Lost int64
	// Bytes is the pcapng file's size in bytes.
	Bytes int64
}

// Interfaces are the four pcapng interfaces of a link capture, in this order. Each packet
// is written once, so that Wireshark's TCP and QUIC reassembly sees each endpoint's view:
// a delivered packet on "down" or "up" at the instant it left the link, its opt_comment giving
// how long before it entered the bottleneck (queueing + serialization + propagation delay); a
// dropped packet on "down-dropped" or "up-dropped" at the instant it was refused, its comment
// giving the cause. The drop interfaces have link type LINKTYPE_USER0, so that Wireshark shows
// dropped packets (whole) but does not feed them to its TCP analysis, which would otherwise take
// data that never arrived as received and the real retransmission as a duplicate (seen here as
// "New fragment overlaps old data" and HTTP responses left undecoded). To read a dropped packet's
// headers: Decode As, DLT User 0 -> ip. Packets an AQM drops later from
// inside the queue (CoDel, FQ-CoDel, drop-head) are not written: the Tap sees them enter but
// never leave.
var Interfaces = []pcapng.Interface{
	{Name: "down", Description: "server to client, delivered to the client (exit instant)"},
	{Name: "up", Description: "client to server, delivered to the server (exit instant)"},
	{Name: "down-dropped", Description: "server to client, dropped on entry to the bottleneck (raw IP packets; Decode As ip)", LinkType: pcapng.LinkTypeUser0},
	{Name: "up-dropped", Description: "client to server, dropped on entry to the bottleneck (raw IP packets; Decode As ip)", LinkType: pcapng.LinkTypeUser0},
}

// captureRing is how many packet events of one direction may wait for the writer goroutine;
// beyond it events are counted as Lost rather than slowing the link: about 0.2 s of a saturated
// 1 Gbit/s link (data packets and their entry events). Slot buffers are allocated on first use
// and reused: at most ~50 MB per direction.
const captureRing = 1 << 15

// capPkt is one packet event on its way to the writer.
type capPkt struct {
	ev   TapEvent
	at   time.Time
	hash uint64 // TapEnter: the packet's hash (data unused)
	data []byte // a copy of the packet (other events); the slot keeps its capacity
}

// spsc is a single-producer (one forwarding thread), single-consumer (the writer) ring of packet
// events. It takes no lock: a lock shared with the writer would let a descheduled writer thread
// stall a real-time forwarder (priority inversion, seen as release lateness on a loaded machine).
type spsc struct {
	slots      []capPkt
	head, tail atomic.Uint64 // next slot to read (writer), next slot to fill (forwarder)
}

// Session is one running capture: it records a link's packets. Its Tap copies each packet into a slot of its direction's
// ring, and a writer goroutine that polls the rings writes them, so no file is written and no
// lock is taken on a forwarding thread.
type Session struct {
	path    string
	part    *os.File
	rings   [2]spsc // by TapDir
	stopped chan struct{}
	done    chan error
	on      atomic.Bool
	busy    atomic.Int32 // taps under way (Stop waits for them)
	lost    atomic.Int64
	packets int64
	seed    maphash.Seed
}

// Start starts a capture into path: blocks go to path+".part" until Stop, which writes path
// whole and removes the .part file. Errors: the .part file cannot be created.
func Start(path string) (*Session, error) {
	part, err := os.Create(path + ".part")
	if err != nil {
		return nil, fmt.Errorf("start capture: %w", err)
	}
	c := &Session{path: path, part: part, stopped: make(chan struct{}), done: make(chan error, 1), seed: maphash.MakeSeed()}
	for i := range c.rings {
		c.rings[i].slots = make([]capPkt, captureRing)
	}
	c.on.Store(true)
	go c.write()
	return c, nil
}

// Tap is the session's Tap (hook it into the forwarders). An entering packet is only hashed (its exit is matched to it by
// content in the writer); delivered and dropped packets are copied. Each direction must be
// tapped from one goroutine at a time (its forwarder).
func (c *Session) Tap(dir TapDir, at time.Time, pkt []byte, ev TapEvent) {
	c.busy.Add(1)
	defer c.busy.Add(-1)
	if !c.on.Load() || int(dir) >= len(c.rings) {
		return
	}
	r := &c.rings[dir]
	t := r.tail.Load()
	if t-r.head.Load() >= captureRing {
		c.lost.Add(1)
		return
	}
	s := &r.slots[t%captureRing]
	s.ev, s.at = ev, at
	if ev == TapEnter {
		s.hash = maphash.Bytes(c.seed, pkt)
	} else {
		s.data = append(s.data[:0], pkt...)
	}
	r.tail.Store(t + 1)
}

// captureDrain is how often the writer goroutine empties the rings. It polls, so that a Tap never
// wakes a goroutine: waking one from a forwarding thread would hand that thread's Go P to it and
// make the forwarder wait for a P when its ppoll(2) returns (release lateness).
const captureDrain = 5 * time.Millisecond

// write is the writer goroutine: Enhanced Packet Blocks into the .part file until Stop.
func (c *Session) write() {
	w := pcapng.Continue(c.part, len(Interfaces))
	entered := map[uint64][]time.Time{} // hash of packets in flight -> entry instants (FIFO)
	var err error
	tick := time.NewTicker(captureDrain)
	defer tick.Stop()
	for open := true; open; {
		select {
		case <-tick.C:
		case <-c.stopped:
			open = false
		}
		err = c.drain(w, entered, err)
	}
	if err == nil {
		err = w.Flush()
	}
	c.done <- err
}

// drain handles every event waiting in the rings, merging the two directions in time order.
func (c *Session) drain(w *pcapng.Writer, entered map[uint64][]time.Time, err error) error {
	var next, end [2]uint64
	for d := range c.rings {
		next[d], end[d] = c.rings[d].head.Load(), c.rings[d].tail.Load()
	}
	for next[0] < end[0] || next[1] < end[1] {
		d := 0
		if next[0] == end[0] || next[1] < end[1] &&
			c.rings[1].slots[next[1]%captureRing].at.Before(c.rings[0].slots[next[0]%captureRing].at) {
			d = 1
		}
		err = c.handle(w, TapDir(d), &c.rings[d].slots[next[d]%captureRing], entered, err)
		next[d]++
		c.rings[d].head.Store(next[d])
	}
	return err
}

// handle records an entry or writes a delivered or dropped packet of direction dir (unless
// writing already failed with err), and returns the first error.
func (c *Session) handle(w *pcapng.Writer, dir TapDir, p *capPkt, entered map[uint64][]time.Time, err error) error {
	if p.ev == TapEnter {
		entered[p.hash] = append(entered[p.hash], p.at)
		return err
	}
	if err == nil {
		err = w.WritePacket(c.packet(dir, p, entered))
		c.packets++
	}
	return err
}

// packet makes the pcapng packet of a delivered or dropped packet event.
func (c *Session) packet(dir TapDir, p *capPkt, entered map[uint64][]time.Time) pcapng.Packet {
	out := pcapng.Packet{Interface: int(dir), Time: p.at, Data: p.data, Flags: pcapng.FlagInbound}
	if cause, drop := dropCauses[p.ev]; drop {
		out.Interface, out.Comment = 2+int(dir), cause
	} else {
		h := maphash.Bytes(c.seed, p.data)
		if q := entered[h]; len(q) > 0 {
			out.Comment = fmt.Sprintf("entered the bottleneck %.3f ms earlier", float64(p.at.Sub(q[0]))/1e6)
			if len(q) == 1 {
				delete(entered, h)
			} else {
				entered[h] = q[1:]
			}
		}
	}
	return out
}

// Stop ends the capture and writes the final file: section header, interfaces, the secrets
// (a TLS key log, NSS format; may be empty), then the packets. Its Stats count the packets
// written and the events lost (ring full: the writer fell behind); errors wrap the file's.
func (c *Session) Stop(secrets []byte) (Stats, error) {
	c.on.Store(false)
	for c.busy.Load() != 0 {
		time.Sleep(10 * time.Microsecond)
	}
	close(c.stopped)
	werr := <-c.done
	st := Stats{Packets: c.packets, Lost: c.lost.Load()}
	err := errors.Join(werr, c.finish(secrets))
	if fi, serr := os.Stat(c.path); serr == nil {
		st.Bytes = fi.Size()
	}
	if err != nil {
		return st, fmt.Errorf("capture %s: %w", c.path, err)
	}
	return st, nil
}

// finish assembles the final file from the .part file and removes it.
func (c *Session) finish(secrets []byte) error {
	defer os.Remove(c.part.Name())
	if _, err := c.part.Seek(0, io.SeekStart); err != nil {
		c.part.Close()
		return err
	}
	defer c.part.Close()
	f, err := os.Create(c.path)
	if err != nil {
		return err
	}
	w, err := pcapng.NewWriter(f, "pltlab link emulator", Interfaces)
	if err == nil && len(secrets) > 0 {
		err = w.WriteSecrets(pcapng.SecretsTLSKeyLog, secrets)
	}
	if err == nil {
		err = w.WriteRaw(c.part)
	}
	if err == nil {
		err = w.Flush()
	}
	return errors.Join(err, f.Close())
}

// Errors of a link's StartCapture and StopCapture (see Capturer).
var (
	// ErrRunning means a capture is already running on the link (one at a time).
	ErrRunning = errors.New("capture: one is already running on this link")
	// ErrNotRunning means StopCapture was called with no capture running.
	ErrNotRunning = errors.New("capture: none is running on this link")
)
