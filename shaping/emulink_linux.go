package shaping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/internal/rtwait"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// EmuLink is the userspace emulator's Link: a client namespace whose TUN device is joined to a
// host-side TUN device through two forwarders (one emu.Pipe per direction).
type EmuLink struct {
	spec         linkspec.Spec
	ns, dev      string
	host, client netip.Addr
	log          *slog.Logger
	nsCreated    bool
	hostDev      *tunDev
	clientDev    *tunDev
	up, down     *forwarder
	stop         atomic.Bool
	wg           sync.WaitGroup
	closeOnce    sync.Once
	closeErr     error
	closed       chan struct{}
	started      bool
	nsLink       *netlink.Handle // netlink in the client namespace (device counters)
	drops        [2]uint64       // device drops already reported (down, up)
	tap          atomic.Pointer[capture.Tap]
	capMu        sync.Mutex
	cap          *capture.Session
}

var _ Link = (*EmuLink)(nil)

// openEmu builds an EmuLink; on any error everything created so far is removed.
func openEmu(ctx context.Context, spec linkspec.Spec, o options) (Link, error) {
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	if err := checkTUN(); err != nil {
		return nil, err
	}
	cleanStale(o.logger)
	ns, dev, n := linkNames()
	host, client := allocAddrs(n)
	l := &EmuLink{spec: spec, ns: ns, dev: dev, host: host, client: client, log: o.logger,
		closed: make(chan struct{})}
	if err := l.setup(o); err != nil {
		return nil, errors.Join(fmt.Errorf("open link %s: %w", spec.Input, err), l.Close())
	}
	l.start()
	closeOnDone(ctx, l.closed, l.Close)
	l.log.Debug("link open", "namespace", ns, "device", dev, "host", host, "client", client, "spec", spec.String())
	return l, nil
}

// setup creates the namespace with its TUN, the host TUN, and the two forwarders.
func (l *EmuLink) setup(o options) error {
	err := newNamedNS(l.ns, func() error {
		l.nsCreated = true
		if err := setupClientNS(o.tcpBufMax); err != nil {
			return err
		}
		d, fellBack, err := openTUNDev(clientDev, o.offload)
		if err != nil {
			return err
		}
		l.clientDev = d
		l.logFallback(clientDev, fellBack)
		return configureDev(clientDev, l.spec.MTU, l.client, l.host)
	})
	if err != nil {
		return err
	}
	d, fellBack, err := openTUNDev(l.dev, o.offload && l.clientDev.offload())
	if err != nil {
		return err
	}
	l.hostDev = d
	l.logFallback(l.dev, fellBack)
	if err := writeSysctl("net/ipv6/conf/"+l.dev+"/disable_ipv6", "1"); err != nil {
		return err
	}
	if err := configureDev(l.dev, l.spec.MTU, l.host, l.client); err != nil {
		return err
	}
	if h, err := netns.GetFromName(l.ns); err == nil {
		l.nsLink, _ = netlink.NewHandleAt(h)
		h.Close()
	}
	l.drops[0], l.drops[1] = l.deviceDrops()
	base := time.Now()
	down, up, err := linkspec.PipeConfigs(l.spec)
	if err != nil {
		return err
	}
	if down.AQM == emu.CAKE || up.AQM == emu.CAKE { // ParseSpec refuses it; a Spec built by hand may not
		return fmt.Errorf("aqm=cake: the userspace emulator has no CAKE: accepted shaper=netem")
	}
	if l.down, err = newForwarder(down, l.hostDev, l.clientDev, l.spec.MTU, base, &l.stop, o.realtime); err != nil {
		return fmt.Errorf("forwarder: %w", err)
	}
	if l.up, err = newForwarder(up, l.clientDev, l.hostDev, l.spec.MTU, base, &l.stop, o.realtime); err != nil {
		return fmt.Errorf("forwarder: %w", err)
	}
	l.setTaps()
	return l.setupNAT()
}

// logFallback warns when a device asked for the fast path got the plain one.
func (l *EmuLink) logFallback(dev string, fellBack bool) {
	if fellBack {
		l.log.Warn("TUN offloads refused by the kernel: the link runs the plain path (one packet per read and write)", "device", dev)
	}
}

// Offload reports whether both directions run the fast path: TUN devices with the virtio-net
// header, TSO/USO super-packets split on read and GRO groups written on the way out (WithOffload).
func (l *EmuLink) Offload() bool {
	return l.down != nil && l.down.fast && l.up.fast
}

func (l *EmuLink) start() {
	l.started = true
	for _, f := range []*forwarder{l.down, l.up} {
		l.wg.Add(1)
		f.running.Store(true) // before run: a take from now on is the forwarder's to answer
		f.raw = rtwait.Acquire()
		go func() { defer l.wg.Done(); f.run() }()
	}
	if !l.down.raw || !l.up.raw {
		l.log.Warn("GOMAXPROCS leaves the link's forwarders no P of their own: they wait through the Go scheduler and may stall (raise GOMAXPROCS by shaping.ProcsPerLink per open link)",
			"gomaxprocs", runtime.GOMAXPROCS(0), "cpus", runtime.NumCPU())
	}
}

// Namespace is the client namespace's name, e.g. "pltlab-1234-1".
func (l *EmuLink) Namespace() string { return l.ns }

// HostDev is the host-side TUN device's name.
func (l *EmuLink) HostDev() string { return l.dev }

// HostAddr is the host-side address (100.64.x.1).
func (l *EmuLink) HostAddr() netip.Addr { return l.host }

// ClientAddr is the client's address in the namespace (100.64.x.2).
func (l *EmuLink) ClientAddr() netip.Addr { return l.client }

// Spec is the link's spec.
func (l *EmuLink) Spec() linkspec.Spec { return l.spec }

// TakeCounters returns both directions' counters since the previous call and resets them.
func (l *EmuLink) TakeCounters() *result.Emulator {
	if l.down == nil {
		return nil
	}
	e := &result.Emulator{Down: l.down.take(), Up: l.up.take()}
	down, up := l.deviceDrops()
	e.Down.DropsOther += int64(down - l.drops[0])
	e.Up.DropsOther += int64(up - l.drops[1])
	l.drops = [2]uint64{down, up}
	return e
}

// deviceDrops reads the transmit drops of the host TUN (packets towards the client that the
// kernel dropped because the forwarder did not read them in time) and of the client TUN.
func (l *EmuLink) deviceDrops() (down, up uint64) {
	if link, err := netlink.LinkByName(l.dev); err == nil && link.Attrs().Statistics != nil {
		down = link.Attrs().Statistics.TxDropped
	}
	if l.nsLink != nil {
		if link, err := l.nsLink.LinkByName(clientDev); err == nil && link.Attrs().Statistics != nil {
			up = link.Attrs().Statistics.TxDropped
		}
	}
	return max(down, l.drops[0]), max(up, l.drops[1])
}

// PacketsPerWrite is the mean number of wire packets per write to the client's device (the
// downstream direction) since the link opened: above 1 when the fast path coalesced due packets
// into GRO groups, 0 on the plain path or before any write.
func (l *EmuLink) PacketsPerWrite() float64 {
	if l.down == nil {
		return 0
	}
	return l.down.packetsPerWrite()
}

// EmulatorCPU is the CPU time both forwarder threads have used since the link opened.
func (l *EmuLink) EmulatorCPU() time.Duration {
	if l.down == nil {
		return 0
	}
	return l.down.cpu() + l.up.cpu()
}

// Close stops the forwarders, deletes both TUN devices and the namespace. It is idempotent.
func (l *EmuLink) Close() error {
	l.closeOnce.Do(func() {
		l.stop.Store(true)
		for _, f := range []*forwarder{l.down, l.up} {
			if f != nil {
				f.interrupt()
			}
		}
		l.wg.Wait()
		if l.cap != nil {
			l.StopCapture(nil) // a capture left running: complete its file
		}
		var errs []error
		for _, f := range []*forwarder{l.down, l.up} {
			if f != nil {
				unix.Close(f.wake)
			}
		}
		for _, d := range []*tunDev{l.hostDev, l.clientDev} {
			if d != nil {
				errs = append(errs, d.close())
			}
		}
		if l.nsCreated {
			errs = append(errs, deleteNamedNS(l.ns))
		}
		if l.nsLink != nil {
			l.nsLink.Close()
		}
		l.closeErr = errors.Join(errs...)
		close(l.closed)
		l.log.Debug("link closed", "namespace", l.ns, "err", l.closeErr)
	})
	return l.closeErr
}

// CountFlows attaches c to both forwarders (nil detaches): every packet offered to the link is
// then counted per flow, dropped or not (FlowCounting).
func (l *EmuLink) CountFlows(c *capture.FlowCounter) {
	for _, d := range []struct {
		f    *forwarder
		down bool
	}{{l.down, true}, {l.up, false}} {
		if d.f == nil {
			continue
		}
		if c == nil {
			d.f.tap.Store(nil)
			continue
		}
		down := d.down
		tap := func(pkt []byte, dropped bool) { c.Observe(pkt, down, dropped) }
		d.f.tap.Store(&tap)
	}
}

var _ capture.FlowCounting = (*EmuLink)(nil)
