// Package selfcheck measures an open link with its own probes and judges it against its spec before anything is measured through it.
//
// Run probes a shaping.Link (idle RTT, TCP goodput and RTT under load per direction, loss,
// burst length, delay variation, reordering, trace rate, outages, AQM queue, ECN marks and the
// emulator's own faults) and returns a result.LinkCheck whose lines each state the configured
// value, the measured one and the tolerance. Failure turns a failed check into an error
// wrapping ErrFailed; a link gets result.Attempts checks before it is refused. Options.Quick shortens
// the probes.
package selfcheck

// ProbeProcs is how many Go Ps a running check's probe threads hold at once (an echo server and
// a prober): a program that runs link checks raises GOMAXPROCS by it besides
// shaping.ProcsPerLink, or its probes wait through the Go scheduler.
const ProbeProcs = 2
