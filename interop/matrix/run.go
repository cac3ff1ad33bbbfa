package matrix

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/internal/hostload"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// RunExchange runs exchange case c with client fetching from srv through the case's emulated
// link (client in the link's namespace, server on its host address) while the link records a
// capture, then judges the case from that capture decrypted with both key logs (Decode) and
// from the files the client saved. The outcome is unsupported, with the reason, when a peer
// cannot do what the case asks, when the machine cannot open the link (not root) or when
// tshark is missing; error when the exchange could not be set up or read; pass or fail from
// the evidence otherwise. A measurement case (Exchange.Goodput) is made by the one retry rule:
// a run during which the emulator was late beyond its bound is made once more, the earlier
// attempt kept in the record's Goodput (measure). log receives the link's setup and
// faults (nil: discarded).
func RunExchange(ctx context.Context, c Exchange, client, srv Peer, log *slog.Logger) interop.Record {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	once := func() interop.Record { return runExchangeOnce(ctx, c, client, srv, log) }
	if !c.Goodput {
		return once()
	}
	return measure(ctx, once, log.With("case", c.Name, "client", client.Name, "server", srv.Name))
}

// measure makes a measurement case's record (Exchange.Goodput) with once by the one retry rule
// (result.Retry): an attempt during which the emulator was late (Goodput.LateMS beyond its
// bound) is made once more, after it the earlier attempt is kept in the record
// (Goodput.Earlier); a second late attempt stands, its figure marked not valid. A record
// without a figure, or one made after ctx ended, stands as it is.
func measure(ctx context.Context, once func() interop.Record, log *slog.Logger) interop.Record {
	var rec interop.Record
	var earlier []interop.GoodputAttempt
	result.Retry(func(attempt int) (again bool, err error) {
		rec = once()
		g := rec.Observed.Goodput
		if g == nil {
			return false, nil
		}
		if attempt > 1 {
			g.Attempt, g.Earlier = attempt, earlier
		}
		if !late(g) || attempt >= result.Attempts || ctx.Err() != nil {
			return false, nil
		}
		log.Warn("emulator late during a measurement: made again", "late_ms", g.LateMS, "bound_ms", g.LateBoundMS)
		earlier = append(earlier, interop.GoodputAttempt{Time: rec.Time, Mbps: g.Mbps, InvalidReason: g.InvalidReason, LateMS: g.LateMS})
		return true, nil
	})
	return rec
}

// late reports a goodput attempt during which the emulator was later than its bound.
func late(g *interop.Goodput) bool { return g.LateMS > g.LateBoundMS }

// runExchangeOnce runs exchange case c once (RunExchange without the retry rule).
func runExchangeOnce(ctx context.Context, c Exchange, client, srv Peer, log *slog.Logger) interop.Record {
	r := interop.Result{Case: c.Name, Start: time.Now()}
	addr := ""
	out, reason, err := runExchange(ctx, c, client, srv, log, &r.Observed, &addr)
	r.Duration = time.Since(r.Start)
	if err != nil {
		out, reason = interop.Error, err.Error()
	}
	r.Outcome, r.Reason = out, reason
	rec := interop.NewRecord(r, interop.Case{Rule: c.Rule}, client.Name, client.Version, srv.Name, srv.Version, addr, c.Link)
	rec.Build, rec.ClientBuild = srv.Build, client.Build
	return rec
}

func runExchange(ctx context.Context, c Exchange, client, srv Peer, log *slog.Logger, ev *interop.Observation, addr *string) (interop.Outcome, string, error) {
	if why := notSupported(c, client, srv); why != "" {
		return interop.Unsupported, why, nil
	}
	if _, err := exec.LookPath(Tshark); err != nil {
		return interop.Unsupported, "tshark not found (Debian package tshark; make setup installs it): the capture cannot be decrypted", nil
	}
	spec, err := linkspec.Parse(c.Link)
	if err != nil {
		return "", "", fmt.Errorf("link %s: %w", c.Link, err)
	}
	root, err := os.MkdirTemp("", "pltlab-exchange-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(root)
	d, names, err := prepare(root, c.Files, c.runs())
	if err != nil {
		return "", "", err
	}
	l, err := shaping.Open(ctx, spec, shaping.WithLogger(log))
	if errors.Is(err, shaping.ErrNotRoot) || errors.Is(err, shaping.ErrNoTUN) || errors.Is(err, errors.ErrUnsupported) {
		return interop.Unsupported, "the case's emulated link cannot open here (exchange cases need root on Linux): " + err.Error(), nil
	}
	if err != nil {
		return "", "", fmt.Errorf("open link %s: %w", c.Link, err)
	}
	defer l.Close()
	capt, ok := l.(capture.Capturer)
	if !ok {
		return "", "", fmt.Errorf("link %s records no capture (shaper %s)", c.Link, spec.Shaper)
	}
	a, stop, unsup, err := startServer(ctx, srv, l.HostAddr(), d, c.Server)
	if err != nil || unsup != "" {
		return interop.Unsupported, unsup, err
	}
	*addr = a
	pcap := filepath.Join(root, "link.pcapng")
	if err := capt.StartCapture(pcap); err != nil {
		stop()
		return "", "", fmt.Errorf("capture: %w", err)
	}
	l.TakeCounters() // the exchange's counters start here
	host := hostload.Start()
	unsup, summary := runClient(ctx, l, client, a, d, c, names)
	counters := l.TakeCounters()
	busy, steal := host.End()
	_, cerr := capt.StopCapture(nil)
	stop()
	if unsup != "" || cerr != nil {
		return interop.Unsupported, unsup, cerr
	}
	keys := filepath.Join(root, "keys.log")
	if err := joinFiles(keys, d.clientKeys, d.serverKeys); err != nil {
		return "", "", err
	}
	port, err := serverPort(a)
	if err != nil {
		return "", "", err
	}
	w, err := Decode(ctx, pcap, keys, port, spec.DownImp.Corrupt > 0 || spec.UpImp.Corrupt > 0)
	if err != nil {
		return "", "", err
	}
	if counters != nil && (counters.Up.Corrupted > 0 || counters.Down.Corrupted > 0) {
		w.Corrupted = map[string]int{"up": int(counters.Up.Corrupted), "down": int(counters.Down.Corrupted)}
	}
	if counters != nil && (counters.Up.Bleached > 0 || counters.Down.Bleached > 0) {
		w.Bleached = map[string]int{"up": int(counters.Up.Bleached), "down": int(counters.Down.Bleached)}
	}
	if counters != nil {
		w.Rebinds, w.Unbound = int(counters.Up.Rebinds), int(counters.Down.Unbound)
	}
	ev.Wire, ev.Files = w, checkFiles(d, names, c.runs())
	out, reason := c.judgeFor(client, srv)(w, ev.Files)
	if c.Goodput {
		ev.Goodput = goodputOf(w, ev.Files, out, counters, hostload.Describe(busy, steal))
		if out == interop.Pass && !ev.Goodput.Valid {
			reason += "; the figure is no measurement: " + ev.Goodput.InvalidReason
		}
	}
	if out == interop.Fail {
		reason += " (client: " + summary + ")"
	}
	return out, reason, nil
}

// goodputOf is the goodput figure of a measurement case's run: the files' bytes over the
// capture's transfer time (Wire.TransferMS) when the case passed, and whether it is a
// measurement: not when the transfer did not complete correctly, nor when the emulator was
// late during it (e, the link's counters over the exchange: result.Emulator.Late against
// result.LatenessBoundMs; machine is the machine's load during it, hostload.Describe), nor
// without counters (lateness unknown).
func goodputOf(w *interop.Wire, files []interop.FileCheck, out interop.Outcome, e *result.Emulator, machine string) *interop.Goodput {
	g := &interop.Goodput{TimeMS: w.TransferMS, LateBoundMS: result.LatenessBoundMs}
	var why []string
	if out == interop.Pass {
		for _, f := range files {
			g.Bytes += f.Bytes
		}
		g.Mbps = mbps(g.Bytes, g.TimeMS)
	} else {
		why = append(why, "the transfer did not complete correctly")
	}
	if e == nil {
		why = append(why, "the link kept no counters: the emulator's lateness is unknown")
	} else {
		e.LateBoundMs = result.LatenessBoundMs
		g.LateMS = e.LateMs()
		if e.Late() {
			why = append(why, e.LateReason(machine))
		}
	}
	g.Valid, g.InvalidReason = len(why) == 0, strings.Join(why, "; ")
	return g
}

// prepare makes the exchange's directories (one for each of the client's runs), a certificate
// and the files served: random bytes of the sizes given, named 1.bin, 2.bin, ..., and
// ChromiumPage, which only Chromium asks for.
func prepare(root string, sizes []int, runs int) (peerDir, []string, error) {
	d := peerDir{root: root, www: filepath.Join(root, "www"), dl: filepath.Join(root, "dl"),
		serverKeys: filepath.Join(root, "server.keys"), clientKeys: filepath.Join(root, "client.keys")}
	if err := errors.Join(os.Mkdir(d.www, 0o755), os.Mkdir(d.dl, 0o777)); err != nil {
		return d, nil, err
	}
	for i := 1; i <= runs; i++ {
		if err := os.Mkdir(d.run(i), 0o777); err != nil {
			return d, nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(d.www, ChromiumPage), []byte(chromiumPageHTML), 0o644); err != nil {
		return d, nil, err
	}
	var err error
	if d.cert, d.key, err = writeCert(root); err != nil {
		return d, nil, err
	}
	var names []string
	for i, n := range sizes {
		b := make([]byte, n)
		rand.Read(b)
		name := strconv.Itoa(i+1) + ".bin"
		if err := os.WriteFile(filepath.Join(d.www, name), b, 0o644); err != nil {
			return d, nil, err
		}
		names = append(names, name)
	}
	return d, names, nil
}

// checkFiles compares each file the client saved in each of its runs with the one served
// (named "1.bin", or "run 2: 1.bin" when the client ran more than once).
func checkFiles(d peerDir, names []string, runs int) []interop.FileCheck {
	var out []interop.FileCheck
	for i := 1; i <= runs; i++ {
		for _, n := range names {
			want, _ := os.ReadFile(filepath.Join(d.www, n))
			got, err := os.ReadFile(filepath.Join(d.run(i), n))
			fc := interop.FileCheck{Name: n, Bytes: len(want), Got: len(got), Match: err == nil && bytes.Equal(got, want)}
			if runs > 1 {
				fc.Name = fmt.Sprintf("run %d: %s", i, n)
			}
			if err != nil {
				fc.Got = -1
			}
			out = append(out, fc)
		}
	}
	return out
}

// joinFiles writes the concatenation of the files that exist among srcs into dst.
func joinFiles(dst string, srcs ...string) error {
	var b []byte
	for _, s := range srcs {
		x, _ := os.ReadFile(s)
		b = append(b, x...)
	}
	return os.WriteFile(dst, b, 0o600)
}

// serverPort is the UDP port of the server address addr ("host:port").
func serverPort(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return 0, fmt.Errorf("server address %q: %w", addr, err)
	}
	return int(ap.Port()), nil
}
