// Package shaping emulates a network bottleneck link between a client network namespace and the host.
//
// A Link is opened from a linkspec.Spec (package shaping/linkspec parses the LINK grammar).
// The default shaper "emu" is a userspace emulator
// in the design of Mahimahi (Netravali et al., USENIX ATC 2015): the client lives in its own
// network namespace whose only route leaves through a TUN device; this process reads IP packets
// from it and from a peer TUN in the host namespace and forwards each direction through the
// pipeline of package shaping/emu (loss, droptail queue, rate serializer, propagation delay,
// jitter). The "netem" shaper uses a veth pair and tc netem (package shaping/netem). An
// emulated link can record its packets (package shaping/capture); package shaping/selfcheck
// measures an open link against its spec.
package shaping

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
)

// Sentinel errors; the CLI prints the fix they carry.
var (
	// ErrNotRoot means the process lacks CAP_NET_ADMIN (run as root, e.g. with sudo).
	ErrNotRoot = errors.New("creating network namespaces and TUN devices needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN): run with sudo, or use --link none")
	// ErrNoTUN means /dev/net/tun is missing or unusable.
	ErrNoTUN = errors.New("/dev/net/tun is not available: load the tun module (modprobe tun) or, in a container, pass --device /dev/net/tun; or use shaper=netem")
	// ErrNetemUnavailable means the kernel has no sch_netem.
	ErrNetemUnavailable = errors.New("the kernel has no sch_netem (tc netem): use shaper=emu (the userspace emulator, the default) or load the module with modprobe sch_netem")
)

// EnvHostAddr is the environment variable Command sets to the link's host address.
const EnvHostAddr = "PLTLAB_HOST_ADDR"

// Link is an open emulated link between a client network namespace and the host namespace.
type Link interface {
	// Namespace is the client network namespace's name ("" = none: unshaped, loopback).
	Namespace() string
	// HostAddr is the host-side address (in this process's namespace): servers listen on it and
	// clients in the namespace reach them there.
	HostAddr() netip.Addr
	// ClientAddr is the client's address inside the namespace.
	ClientAddr() netip.Addr
	// Spec is the spec the link was opened with.
	Spec() linkspec.Spec
	// TakeCounters returns the counters since the previous call (nil when unshaped) and resets them.
	TakeCounters() *result.Emulator
	// Close tears the link down (namespace, devices, goroutines). It is idempotent.
	Close() error
}

// QdiscStats is one kernel qdisc's counters as a tc-shaped link reports them (its
// QdiscStats method; "tc -s -j qdisc show" of both ends, see netem.QdiscStats for the fields).
type QdiscStats = netem.QdiscStats

// Reference is a veth pair between the host and a link's namespace that carries no qdisc
// (until Delay): what its probes meet is the machine itself, not the link model.
type Reference interface {
	// HostAddr is the reference's host-side address (its client end is in the link's namespace).
	HostAddr() netip.Addr
	// Delay puts a netem delay of d on both ends (each probe then meets two qdisc timers).
	Delay(ctx context.Context, d time.Duration) error
	// Close removes the pair.
	Close() error
}

// Option configures Open.
type Option func(*options)

type options struct {
	logger    *slog.Logger
	tcpBufMax int
	runner    netem.Runner
	realtime  bool
	offload   bool
	// ownProcess: an emu link's forwarders run in an emulator process of their own.
	ownProcess bool
}

// WithLogger sets the logger for setup, teardown and emulator faults (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		o.logger = cmp.Or(l, o.logger)
	}
}

// WithNetemRunner replaces the runner of the netem backend's tc/ip command lines (tests record
// them with it; the sch_netem availability check is then skipped). Default netem.ExecRunner.
func WithNetemRunner(r netem.Runner) Option { return func(o *options) { o.runner = r } }

// WithOffload selects the emulator's fast path (true, the default): TUN devices with the
// virtio-net header and TSO/USO/GRO offloads, read and written in batches, the link model
// still applied per MTU-sized packet. false selects the plain path (IFF_NO_PI, one packet per
// read and write), which is also used when the kernel refuses the offloads.
func WithOffload(on bool) Option { return func(o *options) { o.offload = on } }

// WithEmulatorProcess selects where an emu link's forwarders run: true (the default in a
// program whose main, or test binary's TestMain, called Child) in an emulator process of their
// own, every thread of it real-time (docs/design.md, "What still stalls the emulator"); false
// in this process. true in a program that never called Child is refused by Open: its
// executable cannot run as an emulator process.
func WithEmulatorProcess(on bool) Option { return func(o *options) { o.ownProcess = on } }

// EnvOffload is the environment variable with which `pltlab shell` and `pltlab link check`
// open their link on the plain path when it is "off" (side-by-side measurements, fallback);
// shaping itself reads no environment.
const EnvOffload = "PLTLAB_EMU_OFFLOAD"

// ProcsPerLink is how many Go Ps an open emu link's forwarder threads may need besides the
// program's own goroutines: one per direction. A forwarder returning from ppoll(2) needs a P;
// with GOMAXPROCS equal to the CPU count it can wait behind busy goroutines (an in-process
// server, a TCP sender): 50-75 ms of release lateness on the ACK direction at 1 Gbit/s with
// GOMAXPROCS=2, measured here. shaping changes no process-wide setting; a main that opens
// links next to CPU-heavy goroutines may call
// runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + links*shaping.ProcsPerLink) itself.
const ProcsPerLink = 2

// LatenessBound is the most release lateness a measurement through the emulator accepts
// (result.LatenessBoundMs, 5 ms): a link check's lateness line fails above it, every allowance a
// check line takes from the emulator's recorded lateness is capped at it, and a page load that
// saw more is not a valid measurement (result.OutcomeEmulatorLate).
const LatenessBound = time.Duration(result.LatenessBoundMs * float64(time.Millisecond))

// DefaultTCPBufMax is the tcp_rmem/tcp_wmem maximum set inside client namespaces: 32 MiB, the
// root namespace's tcp_rmem maximum on Debian 12 and enough for 1 Gbit/s x 250 ms.
const DefaultTCPBufMax = 32 << 20

// Available reports whether this machine can open a link of spec's shaper, before anything is
// set up: ErrNetemUnavailable (wrapped, naming the link) for shaper=netem on a kernel without
// sch_netem; nil otherwise (root, TUN and namespaces are checked when the link opens).
func Available(spec linkspec.Spec) error {
	if spec.Shaper == linkspec.ShaperNetem && netemMissing() {
		return fmt.Errorf("link %s: %w", spec.Input, ErrNetemUnavailable)
	}
	return nil
}

// Open creates a link for spec: no namespace for shaper "none", a TUN emulator for "emu", a veth
// pair with netem for "netem". It first deletes stale pltlab namespaces and devices whose owning
// process is gone. The link is closed when ctx is cancelled. Errors: ErrNotRoot, ErrNoTUN,
// ErrNetemUnavailable (wrapped with context). An emu link runs two forwarder threads, at
// SCHED_FIFO priority unless WithRealtime(false). Open changes no process-wide setting: a
// forwarder returning from ppoll(2) needs a Go P, and with GOMAXPROCS equal to the CPU count
// it may wait behind busy goroutines (measured at 50-75 ms of release lateness on the ACK
// direction at 1 Gbit/s with GOMAXPROCS=2 and an in-process sender), so a program that runs
// CPU-heavy goroutines next to a fast link should raise GOMAXPROCS by 2 per open link itself.
func Open(ctx context.Context, spec linkspec.Spec, opts ...Option) (Link, error) {
	o := options{logger: slog.Default(), tcpBufMax: DefaultTCPBufMax, realtime: true, offload: true, ownProcess: wantOwnProcess()}
	for _, f := range opts {
		f(&o)
	}
	if o.ownProcess && !childAsked() {
		return nil, errNoChild
	}
	spec.MTU = cmp.Or(spec.MTU, linkspec.DefaultMTU)
	switch spec.Shaper {
	case linkspec.ShaperNone:
		return noneLink{spec: spec}, nil
	case linkspec.ShaperEmu, "":
		spec.Shaper = linkspec.ShaperEmu
		return openEmu(ctx, spec, o)
	case linkspec.ShaperNetem:
		return openNetem(ctx, spec, o)
	}
	return nil, fmt.Errorf("open link: unknown shaper %q: accepted emu, netem or none", spec.Shaper)
}

// Command returns a command that runs name with args inside l's client namespace (through
// `ip netns exec`), with PLTLAB_HOST_ADDR set to l.HostAddr(). For an unshaped link it runs
// in this namespace.
func Command(ctx context.Context, l Link, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if ns := l.Namespace(); ns != "" {
		cmd = exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, name, args...)
	}
	cmd.Env = append(os.Environ(), EnvHostAddr+"="+l.HostAddr().String())
	return cmd
}

// noneLink is the unshaped link: loopback, no namespace, no counters.
type noneLink struct{ spec linkspec.Spec }

var _ Link = noneLink{}

func (noneLink) Namespace() string              { return "" }
func (noneLink) HostAddr() netip.Addr           { return netip.AddrFrom4([4]byte{127, 0, 0, 1}) }
func (noneLink) ClientAddr() netip.Addr         { return netip.AddrFrom4([4]byte{127, 0, 0, 1}) }
func (l noneLink) Spec() linkspec.Spec          { return l.spec }
func (noneLink) TakeCounters() *result.Emulator { return nil }
func (noneLink) Close() error                   { return nil }

// ShaperVeth is the Shaper of a VethLink's Spec (not accepted by linkspec.Parse: a veth path is
// opened with OpenVeth).
const ShaperVeth = "veth"
