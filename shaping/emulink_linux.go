package shaping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
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
	base         time.Time // the forwarders' time base (both processes')
	// fw runs the forwarders in this process; proc in the link's emulator process (the
	// default in a program that called Child: docs/design.md, "What still stalls the
	// emulator"). Exactly one is set once the link is open.
	fw        *fwdPair
	proc      *emuProc
	capMu     sync.Mutex // with proc: capturing
	capturing bool
	counted   *capture.FlowCounter // with proc: the counter attached (CountFlows)
	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	nsLink    *netlink.Handle // netlink in the client namespace (device counters)
	drops     [2]uint64       // device drops already reported (down, up)
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
	down, up, err := linkspec.PipeConfigs(l.spec)
	if err != nil {
		return err
	}
	if down.AQM == emu.CAKE || up.AQM == emu.CAKE { // ParseSpec refuses it; a Spec built by hand may not
		return fmt.Errorf("aqm=cake: the userspace emulator has no CAKE: accepted shaper=netem")
	}
	if err := l.setupNAT(); err != nil {
		return err
	}
	l.base = time.Now()
	if o.ownProcess {
		l.proc, err = startEmuProc(l.childConfig(down, up, monoNow(), o), l.hostDev, l.clientDev)
		if err == nil && l.proc.warn != "" {
			l.log.Warn("the link's emulator process runs without what it asked for: its forwarders may be late", "reason", l.proc.warn)
		}
		return err
	}
	nat := newNAT(l.spec.Rebind, l.client, natAddrs(l.client), natSeed(l.spec.Seed))
	if l.fw, err = newPair(down, up, l.hostDev, l.clientDev, l.spec.MTU, l.base, o.realtime, nat); err != nil {
		return fmt.Errorf("forwarder: %w", err)
	}
	return nil
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
	if l.proc != nil {
		return l.proc.fast
	}
	return l.fw != nil && l.fw.fast()
}

// Process is where the link's forwarders run: ProcessOwn (the link's emulator process) or
// ProcessShared (this process).
func (l *EmuLink) Process() string {
	if l.proc != nil {
		return ProcessOwn
	}
	return ProcessShared
}

func (l *EmuLink) start() {
	if l.fw != nil {
		l.fw.start(l.log)
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

// TakeCounters returns both directions' counters since the previous call and resets them; nil
// when the emulator process is gone (its error is logged).
func (l *EmuLink) TakeCounters() *result.Emulator {
	var down, up emu.Counters
	switch {
	case l.proc != nil:
		r, err := l.proc.call(emuReq{Op: opTake})
		if err != nil {
			l.log.Error("link counters", "err", err)
			return nil
		}
		down, up = r.Down, r.Up
	case l.fw != nil:
		down, up = l.fw.take()
	default:
		return nil
	}
	e := &result.Emulator{Down: direction(down, l.base), Up: direction(up, l.base), Process: l.Process()}
	dd, du := l.deviceDrops()
	e.Down.DropsOther += int64(dd - l.drops[0])
	e.Up.DropsOther += int64(du - l.drops[1])
	l.drops = [2]uint64{dd, du}
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
	if l.proc != nil {
		r, _ := l.proc.call(emuReq{Op: opStats})
		return r.PerWrite
	}
	if l.fw == nil {
		return 0
	}
	return l.fw.packetsPerWrite()
}

// EmulatorCPU is the CPU time both forwarder threads have used since the link opened.
func (l *EmuLink) EmulatorCPU() time.Duration {
	if l.proc != nil {
		r, _ := l.proc.call(emuReq{Op: opStats})
		return r.CPU
	}
	if l.fw == nil {
		return 0
	}
	return l.fw.cpu()
}

// Close stops the forwarders (and the emulator process), deletes both TUN devices and the
// namespace. It is idempotent.
func (l *EmuLink) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		if l.proc != nil {
			errs = append(errs, l.proc.stop())
		}
		if l.fw != nil {
			l.fw.halt()
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
// then counted per flow, dropped or not (FlowCounting). With an emulator process the counts
// are kept there: c asks for them (capture.FlowCounter.Remote) until it is detached, when they
// are copied into it.
func (l *EmuLink) CountFlows(c *capture.FlowCounter) {
	if l.proc == nil {
		if l.fw != nil {
			l.fw.countFlows(c)
		}
		return
	}
	l.capMu.Lock()
	defer l.capMu.Unlock()
	if c != nil {
		if _, err := l.proc.call(emuReq{Op: opFlowsOn}); err != nil {
			l.log.Error("count flows", "err", err)
			return
		}
		l.counted = c
		c.Remote(func(k capture.FlowKey) (down, up capture.FlowCounts) {
			r, _ := l.proc.call(emuReq{Op: opFlowCounts, Key: k})
			return r.FlowDown, r.FlowUp
		})
		return
	}
	if l.counted == nil {
		return
	}
	r, err := l.proc.call(emuReq{Op: opFlowsOff})
	if err != nil {
		l.log.Error("count flows", "err", err)
	}
	l.counted.Load(r.FlowsDown, r.FlowsUp)
	l.counted = nil
}

var _ capture.FlowCounting = (*EmuLink)(nil)
