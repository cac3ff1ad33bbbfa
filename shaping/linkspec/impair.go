package linkspec

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
)

// Impair is one direction's impairments beyond rate, delay, per-packet jitter and droptail
// queue. Each is set for both directions by its key (loss=1%) or for one by a prefixed key
// (down.loss=1%, up.aqm=codel).
type Impair struct {
	// Loss is the mean loss rate in [0, 1]: the Bernoulli probability (loss=P%), the mean of the
	// Gilbert model (loss=P%,burst=N) or the stationary loss rate of a full Gilbert-Elliott
	// model (loss=gemodel:...).
	Loss float64
	// Burst is the mean loss-burst length in packets of loss=P%,burst=N (0: Bernoulli, or GE).
	Burst float64
	// GE is the full Gilbert-Elliott model of loss=gemodel:p/r/1-h/1-k (zero when not given).
	GE emu.GilbertElliott
	// Corrupt is the probability in [0, 1] that a packet carrying a UDP or TCP payload has one
	// bit of that payload flipped, its transport checksum kept valid (corrupt=P%; emu.Config's
	// Corrupt), so the endpoint's own integrity check meets it.
	Corrupt float64
	// DelayVar redraws the one-way delay uniformly from [RTT/2-DelayVar, RTT/2+DelayVar] every
	// DelayVarEvery (delay variation over time; later packets may overtake earlier ones).
	DelayVar time.Duration
	// DelayVarEvery is the redraw interval (default emu.DefaultDelayVarEvery, 100 ms).
	DelayVarEvery time.Duration
	// ReorderProb holds a packet back by ReorderDelay with this probability (reorder=P%).
	ReorderProb float64
	// ReorderDelay is the hold of a reordered packet (reorder_delay=D, default DefaultReorderDelay).
	ReorderDelay time.Duration
	// Trace is the Mahimahi trace file whose delivery opportunities replace the rate
	// (down=trace:FILE); the direction's Rate is then the trace's mean rate.
	Trace string
	// AQM is the queue discipline (aqm=droptail|drophead|codel|pie|fq_codel|cake; cake with
	// shaper=netem only).
	AQM emu.AQM
	// Target and Interval are CoDel's (and FQ-CoDel's) target and interval, or PIE's target
	// delay and update interval; 0 = the discipline's standard default.
	Target, Interval time.Duration
	// ECN marks ECN-capable packets instead of dropping them (ecn=true; CoDel, PIE, FQ-CoDel).
	ECN bool
	// BleachECN clears the ECN field of every delivered packet to Not-ECT (bleach=ecn; emu.Config's
	// BleachECN), as a middlebox that rewrites the old TOS byte does (RFC 9000 section 13.4.2).
	BleachECN bool
}

// DefaultReorderDelay is how long a reordered packet is held back when reorder_delay is not
// given: 10 ms.
const DefaultReorderDelay = 10 * time.Millisecond

// aqmLimits are the standard packet limits used as the queue when an AQM is chosen and no queue
// is given: Linux sch_codel and sch_pie 1000 packets, sch_fq_codel 10240 (RFC 8290 section 4.1).
var aqmLimits = map[emu.AQM]int{emu.CoDel: 1000, emu.PIE: 1000, emu.FQCoDel: 10240}

// dirKeys are the keys that take a down. or up. prefix.
var dirKeys = []string{"loss", "burst", "corrupt", "delayvar", "delayvar_every", "reorder", "reorder_delay", "aqm", "target", "interval", "ecn", "bleach"}

// setImpair applies one directional key to the impairments in imps.
func setImpair(imps []*Impair, key, val string) error {
	for _, im := range imps {
		if err := im.set(key, val); err != nil {
			return err
		}
	}
	return nil
}

func (im *Impair) set(key, val string) error {
	var err error
	switch key {
	case "loss":
		err = im.parseLoss(val)
	case "burst":
		im.Burst, err = strconv.ParseFloat(val, 64)
		if err != nil || !(im.Burst >= 1) || im.Burst > 1e6 {
			err = fmt.Errorf("bad burst %q: accepted a mean loss-burst length in packets, 1..1000000, with loss=P%%", val)
		}
	case "corrupt":
		im.Corrupt, err = parsePercent("corrupt", val)
		if err != nil {
			err = fmt.Errorf("bad corrupt %q: accepted a percentage in [0%%,100%%] such as 2%% (the share of packets with a UDP or TCP payload that get one payload bit flipped)", val)
		}
	case "delayvar":
		im.DelayVar, err = parseDelay("delayvar", val)
	case "delayvar_every":
		im.DelayVarEvery, err = parseDelay("delayvar_every", val)
		if err == nil && im.DelayVarEvery < time.Millisecond {
			err = fmt.Errorf("bad delayvar_every %q: accepted a duration in 1ms..1m", val)
		}
	case "reorder":
		im.ReorderProb, err = parsePercent("reorder", val)
	case "reorder_delay":
		im.ReorderDelay, err = parseDelay("reorder_delay", val)
	case "aqm":
		im.AQM, err = parseAQM(val)
	case "target":
		im.Target, err = parseDelay("target", val)
	case "interval":
		im.Interval, err = parseDelay("interval", val)
	case "ecn":
		im.ECN, err = strconv.ParseBool(val)
		if err != nil {
			err = fmt.Errorf("bad ecn %q: accepted true or false", val)
		}
	case "bleach":
		switch strings.ToLower(val) {
		case "ecn":
			im.BleachECN = true
		case "none":
			im.BleachECN = false
		default:
			err = fmt.Errorf("bad bleach %q: accepted ecn (clear the IP ECN field of every packet delivered) or none", val)
		}
	}
	return err
}

// parseLoss reads "P%" (Bernoulli, or Gilbert with burst=N) or "gemodel:p/r[/1-h[/1-k]]"
// in percent, netem's order and defaults (1-h 100 %, 1-k 0 %).
func (im *Impair) parseLoss(val string) error {
	im.GE = emu.GilbertElliott{}
	spec, ok := strings.CutPrefix(strings.ToLower(val), "gemodel:")
	if !ok {
		l, err := parseLoss(val)
		im.Loss = l
		return err
	}
	bad := fmt.Errorf("bad loss %q: accepted gemodel:p/r[/1-h[/1-k]] in percent, e.g. gemodel:1%%/30%%/100%%/0%% (tc-netem's gemodel)", val)
	parts := strings.Split(spec, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return bad
	}
	v := []float64{0, 0, 1, 0}
	for i, p := range parts {
		f, err := parseLoss(p)
		if err != nil || !strings.HasSuffix(p, "%") {
			return bad
		}
		v[i] = f
	}
	im.GE = emu.GilbertElliott{P: v[0], R: v[1], H1: v[2], K1: v[3]}
	if im.GE.P+im.GE.R == 0 {
		return fmt.Errorf("bad loss %q: p and r are both 0: accepted p+r > 0", val)
	}
	im.Loss = im.GE.MeanLoss()
	return nil
}

// parsePercent reads "P%" in [0 %, 100 %].
func parsePercent(key, val string) (float64, error) {
	num, pct := strings.CutSuffix(val, "%")
	f, err := strconv.ParseFloat(num, 64)
	if !pct || err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("bad %s %q: accepted a percentage in [0%%,100%%] such as 5%%", key, val)
	}
	return f / 100, nil
}

func parseAQM(val string) (emu.AQM, error) {
	for _, a := range []emu.AQM{emu.DropTail, emu.DropHead, emu.CoDel, emu.PIE, emu.FQCoDel, emu.CAKE} {
		if strings.EqualFold(val, a.String()) || strings.EqualFold(val, strings.ReplaceAll(a.String(), "_", "")) {
			return a, nil
		}
	}
	return 0, fmt.Errorf("bad aqm %q: accepted droptail, drophead, codel, pie, fq_codel or cake (cake with shaper=netem)", val)
}

// check validates im for a link with one-way delay oneWay.
func (im *Impair) check(dir string, oneWay time.Duration) error {
	if im.Burst > 0 {
		if im.GE.Enabled() {
			return fmt.Errorf("%s: burst=%g with loss=gemodel: accepted burst only with loss=P%%", dir, im.Burst)
		}
		if im.Loss == 0 {
			return fmt.Errorf("%s: burst=%g without loss: accepted burst=N together with loss=P%%", dir, im.Burst)
		}
		if _, err := emu.Simple(im.Loss, im.Burst); err != nil {
			return fmt.Errorf("%s: loss=%g%%,burst=%g: %v", dir, im.Loss*100, im.Burst, err)
		}
	}
	if im.DelayVar > oneWay {
		return fmt.Errorf("%s: delayvar %s exceeds the one-way delay %s (rtt/2): accepted delayvar <= rtt/2, so no delay falls below 0", dir, im.DelayVar, oneWay)
	}
	if im.DelayVarEvery > 0 && im.DelayVar == 0 {
		return fmt.Errorf("%s: delayvar_every without delayvar: accepted delayvar_every together with delayvar=D", dir)
	}
	if im.ReorderDelay > 0 && im.ReorderProb == 0 {
		return fmt.Errorf("%s: reorder_delay without reorder=P%%: accepted reorder_delay together with reorder=P%%", dir)
	}
	if (im.Target > 0 || im.Interval > 0 || im.ECN) && im.AQM == emu.CAKE {
		return fmt.Errorf("%s: target, interval or ecn with aqm=cake: accepted aqm=cake alone (CAKE's COBALT keeps its own 5 ms target and 100 ms interval and always marks ECN-capable packets)", dir)
	}
	if (im.Target > 0 || im.Interval > 0 || im.ECN) && im.AQM != emu.CoDel && im.AQM != emu.PIE && im.AQM != emu.FQCoDel {
		return fmt.Errorf("%s: target, interval or ecn without an AQM: accepted them with aqm=codel, pie or fq_codel", dir)
	}
	if im.ECN && im.BleachECN {
		return fmt.Errorf("%s: ecn=true with bleach=ecn: accepted one of them per direction (the bleaching clears at delivery every CE mark the AQM sets)", dir)
	}
	return nil
}

// items gives im's canonical key=value items, each key prefixed with prefix ("", "down." or "up.").
func (im Impair) items(prefix string) []string {
	var b []string
	add := func(k, v string) { b = append(b, prefix+k+"="+v) }
	pct := func(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }
	switch {
	case im.GE.Enabled():
		add("loss", "gemodel:"+pct(im.GE.P)+"/"+pct(im.GE.R)+"/"+pct(im.GE.H1)+"/"+pct(im.GE.K1))
	case im.Loss > 0:
		add("loss", pct(im.Loss))
	}
	if im.Burst > 0 {
		add("burst", strconv.FormatFloat(im.Burst, 'f', -1, 64))
	}
	if im.Corrupt > 0 {
		add("corrupt", pct(im.Corrupt))
	}
	if im.DelayVar > 0 {
		add("delayvar", im.DelayVar.String())
	}
	if im.DelayVarEvery > 0 {
		add("delayvar_every", im.DelayVarEvery.String())
	}
	if im.ReorderProb > 0 {
		add("reorder", pct(im.ReorderProb))
	}
	if im.ReorderDelay > 0 {
		add("reorder_delay", im.ReorderDelay.String())
	}
	if im.AQM != emu.DropTail {
		add("aqm", im.AQM.String())
	}
	if im.Target > 0 {
		add("target", im.Target.String())
	}
	if im.Interval > 0 {
		add("interval", im.Interval.String())
	}
	if im.ECN {
		add("ecn", "true")
	}
	if im.BleachECN {
		add("bleach", "ecn")
	}
	return b
}

// result describes im for the record.
func (im Impair) result() result.LinkDir {
	r := result.LinkDir{Loss: im.Loss, LossBurst: im.Burst, GEP: im.GE.P, GER: im.GE.R, GE1H: im.GE.H1, GE1K: im.GE.K1,
		Corrupt: im.Corrupt, DelayVarMs: quantity.Ms(im.DelayVar), ReorderProb: im.ReorderProb, Trace: im.Trace, ECN: im.ECN, BleachECN: im.BleachECN}
	if im.DelayVar > 0 {
		r.DelayVarEveryMs = quantity.Ms(cmpOr(im.DelayVarEvery, emu.DefaultDelayVarEvery))
	}
	if im.ReorderProb > 0 {
		r.ReorderDelayMs = quantity.Ms(cmpOr(im.ReorderDelay, DefaultReorderDelay))
	}
	switch im.AQM {
	case emu.DropTail:
	case emu.PIE:
		r.AQM = im.AQM.String()
		r.AQMTargetMs, r.AQMIntervalMs = quantity.Ms(cmpOr(im.Target, emu.DefaultPIETarget)), quantity.Ms(cmpOr(im.Interval, emu.DefaultPIETUpdate))
	case emu.CoDel, emu.FQCoDel:
		r.AQM = im.AQM.String()
		r.AQMTargetMs, r.AQMIntervalMs = quantity.Ms(cmpOr(im.Target, emu.DefaultCoDelTarget)), quantity.Ms(cmpOr(im.Interval, emu.DefaultCoDelInterval))
	default:
		r.AQM = im.AQM.String()
	}
	return r
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// apply sets im's parts of the emulator configuration c.
func (im Impair) apply(c *emu.Config) error {
	c.DelayVar, c.DelayVarEvery = im.DelayVar, im.DelayVarEvery
	c.ReorderProb = im.ReorderProb
	if im.ReorderProb > 0 {
		c.ReorderDelay = cmpOr(im.ReorderDelay, DefaultReorderDelay)
	}
	c.AQM, c.ECN, c.BleachECN = im.AQM, im.ECN, im.BleachECN
	switch im.AQM {
	case emu.PIE:
		c.PIE = emu.PIEParams{Target: im.Target, TUpdate: im.Interval}
	case emu.CoDel, emu.FQCoDel:
		c.CoDel = emu.CoDelParams{Target: im.Target, Interval: im.Interval}
	}
	c.Loss, c.Corrupt = im.Loss, im.Corrupt
	switch {
	case im.GE.Enabled():
		c.GE, c.Loss = im.GE, 0
	case im.Burst > 0:
		ge, err := emu.Simple(im.Loss, im.Burst)
		if err != nil {
			return err
		}
		c.GE, c.Loss = ge, 0
	}
	if im.Trace != "" {
		tr, err := LoadTrace(im.Trace)
		if err != nil {
			return err
		}
		c.Trace, c.Rate = tr, 0
	}
	return nil
}

// LoadTrace reads a Mahimahi trace file. Its errors are one clause naming what is wrong and
// what is accepted, without the key (parseRateOrTrace adds it).
func LoadTrace(path string) (*emu.Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s (%v): accepted trace:FILE naming a readable Mahimahi trace file", path, errors.Unwrap(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: accepted trace:FILE naming a Mahimahi trace file", path)
	}
	tr, err := emu.ParseTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err) // ParseTrace names the bad line and what is accepted
	}
	return tr, nil
}

// parseRateOrTrace reads a rate, or "trace:FILE" (then the rate is the trace's mean rate).
func parseRateOrTrace(key, val string) (Rate, string, error) {
	path, ok := strings.CutPrefix(val, "trace:")
	if !ok {
		r, err := ParseRate(val)
		return r, "", err
	}
	if path == "" || strings.ContainsAny(path, ",=") {
		return 0, "", fmt.Errorf("bad %s %q: accepted trace:FILE with a path without ',' or '='", key, val)
	}
	tr, err := LoadTrace(path)
	if err != nil {
		return 0, "", fmt.Errorf("bad %s %q: %v", key, val, err)
	}
	r := Rate(math.Round(tr.MeanRate()))
	if r < MinRate {
		return 0, "", fmt.Errorf("bad %s %q: mean rate %s below %s: accepted a trace of at least 8kbit", key, val, r, MinRate)
	}
	return r, path, nil
}

// parseOutage reads "ON/OFF" (periodic) or "exp:ON/OFF" (random, exponential means).
func parseOutage(val string) (emu.Outage, error) {
	bad := fmt.Errorf("bad outage %q: accepted ON/OFF durations (up ON, then down OFF, repeating), e.g. 5s/2s, or exp:ON/OFF for exponential durations with those means", val)
	spec, random := strings.CutPrefix(strings.ToLower(val), "exp:")
	on, off, ok := strings.Cut(spec, "/")
	if !ok {
		return emu.Outage{}, bad
	}
	o := emu.Outage{Random: random}
	var err1, err2 error
	o.On, err1 = time.ParseDuration(on)
	o.Off, err2 = time.ParseDuration(off)
	if err1 != nil || err2 != nil || o.On < time.Millisecond || o.Off < time.Millisecond || o.On > time.Hour || o.Off > time.Hour {
		return emu.Outage{}, bad
	}
	return o, nil
}

// outageItems gives the canonical items of the outage settings.
func outageItems(o emu.Outage) []string {
	if o.Off <= 0 {
		return nil
	}
	v := o.On.String() + "/" + o.Off.String()
	if o.Random {
		v = "exp:" + v
	}
	b := []string{"outage=" + v}
	if o.Hold {
		b = append(b, "outage_mode=hold")
	}
	return b
}

// Default rebinding times: the QUIC Interop Runner's rebind scenario (--first-rebind=1s,
// --rebind-freq=5s).
const (
	DefaultRebindFirst = time.Second
	DefaultRebindEvery = 5 * time.Second
)

// parseRebind reads "MODE[@FIRST[/EVERY]]": MODE port or addr, FIRST a duration in 1ms..1h
// (default DefaultRebindFirst), EVERY 0 (once) or a duration in 1ms..1h (default
// DefaultRebindEvery).
func parseRebind(val string) (emu.Rebind, error) {
	bad := fmt.Errorf("bad rebind %q: accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)", val)
	mode, times, hasTimes := strings.Cut(strings.ToLower(val), "@")
	r := emu.Rebind{First: DefaultRebindFirst, Every: DefaultRebindEvery}
	switch mode {
	case "port":
		r.Mode = emu.RebindPort
	case "addr":
		r.Mode = emu.RebindAddr
	default:
		return emu.Rebind{}, bad
	}
	if !hasTimes {
		return r, nil
	}
	first, every, hasEvery := strings.Cut(times, "/")
	var err error
	if r.First, err = time.ParseDuration(first); err != nil || r.First < time.Millisecond || r.First > time.Hour {
		return emu.Rebind{}, bad
	}
	if hasEvery {
		if r.Every, err = time.ParseDuration(every); err != nil || r.Every != 0 && (r.Every < time.Millisecond || r.Every > time.Hour) {
			return emu.Rebind{}, bad
		}
	}
	return r, nil
}

// rebindItems gives the canonical item of the rebind setting (none when off).
func rebindItems(r emu.Rebind) []string {
	if !r.Enabled() {
		return nil
	}
	return []string{"rebind=" + r.Mode.String() + "@" + r.First.String() + "/" + r.Every.String()}
}
