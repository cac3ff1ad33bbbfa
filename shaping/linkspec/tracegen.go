package linkspec

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

// opportunityBits is the bits one trace line carries: emu.OpportunityBytes x 8 (Mahimahi).
const opportunityBits = emu.OpportunityBytes * 8

// DefaultTracePeriod is the length of a generated constant-rate trace: 1 s. The trace repeats,
// so its mean rate is (opportunities x 1504 x 8) / period: at 3 Mbit/s 249 lines give
// 2.996 Mbit/s (a whole number of 1504-byte opportunities per period is a rate's resolution).
const DefaultTracePeriod = time.Second

// GenerateTrace builds a Mahimahi trace (opportunity times in ms) from shape:
//
//   - RATE, e.g. 12mbit: a constant rate over DefaultTracePeriod;
//   - steps:RATE/DUR,RATE/DUR,...: each rate for its duration in turn (whole ms), e.g.
//     steps:10mbit/5s,2mbit/5s;
//   - onoff:RATE/ON/OFF: RATE for ON, then no opportunity for OFF, e.g. onoff:10mbit/1s/500ms.
//
// Within a segment of rate R the i-th opportunity (from 1) is at ceil(i x 12032 / R) ms after
// the segment's start, so a segment of D ms holds floor(R x D / 12032) of them; the last one
// is moved to the end of the last segment (the trace's period). Errors are one
// line naming the bad part and what is accepted.
func GenerateTrace(shape string) ([]int64, error) {
	kind, rest, ok := strings.Cut(shape, ":")
	if !ok {
		r, err := ParseRate(shape)
		if err != nil {
			return nil, fmt.Errorf("bad trace shape %q: accepted RATE, steps:RATE/DUR,... or onoff:RATE/ON/OFF", shape)
		}
		return segments([]segment{{r, DefaultTracePeriod}})
	}
	switch kind {
	case "steps":
		var segs []segment
		for _, part := range strings.Split(rest, ",") {
			rs, ds, ok := strings.Cut(part, "/")
			r, err1 := ParseRate(rs)
			d, err2 := time.ParseDuration(ds)
			if !ok || err1 != nil || err2 != nil || d < time.Millisecond {
				return nil, fmt.Errorf("bad step %q in %q: accepted RATE/DURATION such as 10mbit/5s", part, shape)
			}
			segs = append(segs, segment{r, d})
		}
		return segments(segs)
	case "onoff":
		p := strings.Split(rest, "/")
		if len(p) == 3 {
			r, err1 := ParseRate(p[0])
			on, err2 := time.ParseDuration(p[1])
			off, err3 := time.ParseDuration(p[2])
			if err1 == nil && err2 == nil && err3 == nil && on >= time.Millisecond && off >= time.Millisecond {
				return segments([]segment{{r, on}, {0, off}})
			}
		}
		return nil, fmt.Errorf("bad trace shape %q: accepted onoff:RATE/ON/OFF such as onoff:10mbit/1s/500ms", shape)
	}
	return nil, fmt.Errorf("bad trace shape %q: accepted RATE, steps:RATE/DUR,... or onoff:RATE/ON/OFF", shape)
}

type segment struct {
	rate Rate
	dur  time.Duration
}

// segments lays the opportunities of each segment out one after the other.
func segments(segs []segment) ([]int64, error) {
	var ms []int64
	var start int64
	for _, s := range segs {
		d := s.dur.Milliseconds()
		n := int64(float64(s.rate) * float64(d) / 1000 / opportunityBits)
		if n > 10_000_000 {
			return nil, fmt.Errorf("trace segment %s for %s has %d opportunities: accepted at most 10000000", s.rate, s.dur, n)
		}
		for i := int64(1); i <= n; i++ {
			ms = append(ms, start+int64(math.Ceil(float64(i)*opportunityBits*1000/float64(s.rate))))
		}
		start += d
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("trace has no delivery opportunity: accepted a rate of at least 12.032kbit per second of trace")
	}
	// The period is the last time stamp: the last opportunity moves to the end of the last
	// segment, so the trace repeats after exactly the segments' total length.
	ms[len(ms)-1] = max(ms[len(ms)-1], start)
	return ms, nil
}

// WriteTrace writes a trace, one time stamp in ms per line.
func WriteTrace(w io.Writer, ms []int64) error {
	bw := bufio.NewWriter(w)
	for _, t := range ms {
		bw.WriteString(strconv.FormatInt(t, 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
