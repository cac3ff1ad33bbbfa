package emu

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// OpportunityBytes is the bytes one delivery opportunity of a trace carries: 1504, Mahimahi's
// PACKET_SIZE (Netravali et al., USENIX ATC 2015; mahimahi src/frontend/link_queue.hh).
const OpportunityBytes = 1504

// Trace is a schedule of delivery opportunities in Mahimahi's format: one line per opportunity,
// each the time in whole milliseconds since the start of the trace, non-decreasing; several
// lines with the same time are several opportunities at that instant. The trace repeats with a
// period of its last time stamp.
//
// Byte accounting (as Mahimahi's LinkQueue): an opportunity lets the link send OpportunityBytes
// bytes of the queued packets in order (whole IP packets, no link-layer overhead). A packet
// larger than what is left of an opportunity is split: the rest goes in the next opportunities,
// and the packet leaves at the opportunity that carries its last byte. What an opportunity
// does not use is lost: an idle link saves no credit. A packet arriving exactly at an
// opportunity's time may use it. Unlike Mahimahi, which reads its clock once per millisecond
// tick, opportunities here are exact instants on the pipe's timeline, and the delay line comes
// after the link (Mahimahi's mm-delay and mm-link are separate shells whose order the user
// chooses; pltlab always queues first, then delays).
type Trace struct {
	ms     []int64 // opportunity times, ms
	period int64   // ns
}

// ParseTrace reads a trace. Errors name the line; a trace needs at least one opportunity and a
// last time stamp above 0.
func ParseTrace(r io.Reader) (*Trace, error) {
	var ms []int64
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.TrimSpace(sc.Text())
		if f == "" || strings.HasPrefix(f, "#") {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 || v > int64(24*time.Hour/time.Millisecond) {
			// the line is not echoed: the file may be anything (trace:/etc/shadow run as root)
			return nil, fmt.Errorf("trace line %d is not a whole number of milliseconds in 0..86400000: accepted one such number per line", line)
		}
		if n := len(ms); n > 0 && v < ms[n-1] {
			return nil, fmt.Errorf("trace line %d holds %d ms, before the previous line's %d ms: accepted non-decreasing times", line, v, ms[n-1])
		}
		ms = append(ms, v)
		if len(ms) > 10_000_000 {
			return nil, fmt.Errorf("trace longer than 10000000 lines at line %d: accepted at most 10000000 delivery opportunities", line)
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("trace line %d is longer than %d bytes: accepted one whole number of milliseconds per line", line+1, bufio.MaxScanTokenSize)
	} else if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	return NewTrace(ms)
}

// NewTrace builds a trace from opportunity times in ms (non-decreasing, last above 0).
func NewTrace(ms []int64) (*Trace, error) {
	if len(ms) == 0 || ms[len(ms)-1] <= 0 {
		return nil, fmt.Errorf("trace has no opportunity after 0 ms: accepted at least one line with a time above 0")
	}
	if ms[0] < 0 {
		return nil, fmt.Errorf("trace time %d ms at index 0: accepted times >= 0 ms", ms[0])
	}
	for i := 1; i < len(ms); i++ {
		if ms[i] < ms[i-1] {
			return nil, fmt.Errorf("trace time %d ms at index %d follows %d ms: accepted non-decreasing times", ms[i], i, ms[i-1])
		}
	}
	return &Trace{ms: append([]int64(nil), ms...), period: ms[len(ms)-1] * int64(time.Millisecond)}, nil
}

// Period is the time after which the trace repeats (its last time stamp).
func (t *Trace) Period() time.Duration { return time.Duration(t.period) }

// MarshalBinary encodes the trace for another process (the link's emulator process, by
// encoding/gob): its opportunity times in ms, little-endian int64 each. It never fails.
func (t *Trace) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 8*len(t.ms))
	for _, ms := range t.ms {
		b = binary.LittleEndian.AppendUint64(b, uint64(ms))
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded; an error when b is not whole int64s or
// holds no opportunity.
func (t *Trace) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || len(b)%8 != 0 {
		return fmt.Errorf("trace: %d bytes is not a list of opportunity times", len(b))
	}
	ms := make([]int64, len(b)/8)
	for i := range ms {
		ms[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	*t = Trace{ms: ms, period: ms[len(ms)-1] * int64(time.Millisecond)}
	return nil
}

// MeanRate is the trace's mean rate in bit/s: opportunities x 1504 bytes x 8 per period.
func (t *Trace) MeanRate() float64 {
	return float64(len(t.ms)) * OpportunityBytes * 8 / t.Period().Seconds()
}

// MaxGap is the longest time between two consecutive opportunities, the wrap-around from the
// last to the first of the next period included.
func (t *Trace) MaxGap() time.Duration {
	g := t.ms[0] + t.period/int64(time.Millisecond) - t.ms[len(t.ms)-1]
	for i := 1; i < len(t.ms); i++ {
		g = max(g, t.ms[i]-t.ms[i-1])
	}
	return time.Duration(g) * time.Millisecond
}

// at is the time (ns) of opportunity k, counting from 0 over the repetitions.
func (t *Trace) at(k int64) int64 {
	n := int64(len(t.ms))
	return t.ms[k%n]*int64(time.Millisecond) + k/n*t.period
}

// first is the smallest k >= from whose opportunity is at or after ns.
func (t *Trace) first(ns, from int64) int64 {
	if t.at(from) >= ns {
		return from
	}
	n := int64(len(t.ms))
	cycle := ns / t.period
	off := ns - cycle*t.period
	i := int64(sort.Search(len(t.ms), func(i int) bool { return t.ms[i]*int64(time.Millisecond) >= off }))
	k := cycle*n + i
	for t.at(k) < ns {
		k++
	}
	for k > from && t.at(k-1) >= ns { // equal instants at a period's end and the next start
		k--
	}
	return max(k, from)
}
