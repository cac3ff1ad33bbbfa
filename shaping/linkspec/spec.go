package linkspec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
)

// Shaper names.
const (
	ShaperEmu   = "emu"   // userspace TUN emulator (default)
	ShaperNetem = "netem" // veth pair + tc netem (needs the sch_netem kernel module)
	ShaperNone  = "none"  // no shaping: loopback, no namespace
)

// Defaults used by Parse.
const (
	// DefaultMTU is the link MTU in bytes. QUIC handshakes need 1280 or more (RFC 9000 section 14).
	DefaultMTU = 1500
	// MinMTU and MaxMTU bound the accepted MTU (IPv6 minimum link MTU, RFC 8200; jumbo frames).
	MinMTU, MaxMTU = 1280, 9000
	// DefaultQueueBDP is the droptail queue, in BDPs, when a rate is set and no queue is given.
	DefaultQueueBDP = 1.0
	// MinDefaultQueuePackets floors the default queue at this many MTU-sized packets, so short
	// RTTs still get a usable buffer. An explicit queue is never raised.
	MinDefaultQueuePackets = 4
	// DefaultQueueFloorTime floors the default queue at this much time at the link rate: the
	// queue of one BDP is sized as if the RTT were at least 1 ms. Source: Linux TCP's TSO
	// autosizing (net/ipv4/tcp_output.c, tcp_tso_autosize with sk_pacing_shift = 10) sends
	// each burst as about 1 ms of its pacing rate (capped at GSO_MAX_SIZE, 64 KiB), and in
	// slow start the pacing rate is twice cwnd/RTT, so on a short-RTT link a burst arrives
	// faster than the link drains it; a queue below one such burst drops inside every burst
	// (rate=1gbit,rtt=0ms with a 4-packet queue carried 131 Mbit/s with 123 115
	// retransmissions in 10 s). At 3 Mbit/s 1 ms is 375 bytes, so low-rate defaults keep
	// their 1-BDP or 4-packet queue. An explicit queue is never raised.
	DefaultQueueFloorTime = time.Millisecond
)

// Spec is a parsed LINK spec: a preset name or comma-separated key=value items (README, "The link"; docs/extending.md, "A link impairment").
// Each direction gets its own rate, droptail queue, loss and half of RTT as one-way delay.
type Spec struct {
	// Input is the spec as given (a preset name or key=value items).
	Input string
	// Down is the rate towards the client (server to browser); Up from the client. 0 = unlimited.
	Down, Up Rate
	// RTT is the base round-trip time; each direction delays packets by RTT/2.
	RTT time.Duration
	// Loss is the per-direction Bernoulli loss probability in [0, 1] ("loss=1%" gives 0.01).
	Loss float64
	// QueueBytes is the droptail limit of the down direction in bytes (0 when in packets or when
	// the rate is unlimited). With queue=NbdP the up direction uses its own rate: see UpQueueBytes.
	QueueBytes ByteSize
	// QueuePackets is the droptail limit per direction in packets (0 when in bytes).
	QueuePackets int
	// QueueBDP is the queue in BDPs when given as "queue=Nbdp" (or by default); 0 otherwise.
	QueueBDP float64
	// QueueFloored is true when the default queue of one BDP was below DefaultQueueFloor and
	// was raised to it (QueueBytes then holds the floor).
	QueueFloored bool
	// Jitter adds a uniform random delay in [-Jitter, +Jitter] to each packet's one-way delay.
	Jitter time.Duration
	// JitterDist is the jitter's distribution (jitter_dist=uniform|normal|pareto|paretonormal,
	// default uniform): netem's tables, the same on both backends (emu.JitterDist).
	JitterDist emu.JitterDist
	// Reorder lets jitter reorder packets; by default a packet never overtakes an earlier one.
	Reorder bool
	// MTU is the link MTU in bytes (1280..9000, default 1500).
	MTU int
	// Shaper is "emu", "netem" or "none".
	Shaper string
	// Seed seeds the loss and jitter generators (0 = fixed default seed 1).
	Seed int64
	// DownImp and UpImp are each direction's further impairments: Gilbert-Elliott loss, delay
	// variation, reordering, trace-driven rate, queue discipline (see Impair). Loss above is the
	// larger of the two directions' mean loss rates.
	DownImp, UpImp Impair
	// Outage switches both directions off together (outage=ON/OFF or exp:ON/OFF,
	// outage_mode=drop|hold); the emulator seeds random outages from Seed.
	Outage emu.Outage
	// Rebind puts a NAT at the client's edge of the link that rebinds the client's UDP port
	// (rebind=port) or IPv4 address and port (rebind=addr) at First and then every Every
	// (rebind=MODE@FIRST/EVERY, default @1s/5s, the QUIC Interop Runner's rebind scenario;
	// shaper=emu only).
	Rebind emu.Rebind
}

// parseState collects which keys were set so defaults can be applied after the items.
type parseState struct {
	spec     Spec
	queueSet bool
	bdp      float64
	queueB   ByteSize
}

// Parse parses a LINK spec: a preset name (see Presets), key=value items, or a preset name
// followed by key=value overrides ("carlucci2015,loss=1%"). Keys:
//
//   - rate (both directions), down, up: a rate such as 3mbit, or trace:FILE (a Mahimahi trace;
//     the rate is then its mean rate);
//   - rtt: base round-trip time, split evenly into the two one-way delays;
//   - queue: Nbdp | Npkt | size (default 1 BDP, at least 4 packets and 1 ms at the rate (DefaultQueueFloor); with an AQM and no queue,
//     the AQM's standard packet limit: 1000 for codel and pie, 10240 for fq_codel);
//   - jitter: per-packet jitter (each packet its own uniform delay in +-jitter; order kept
//     unless reorder=true); at most rtt/2; jitter_dist=uniform|normal|pareto|paretonormal
//     draws it from netem's tables instead (normal: sd = jitter);
//   - loss=P% (Bernoulli), loss=P%,burst=N (Gilbert model with mean loss P and mean burst N
//     packets), loss=gemodel:p/r/1-h/1-k (Gilbert-Elliott, netem's parameters in percent);
//   - corrupt=P%: flip one bit of the UDP or TCP payload of that share of the packets that carry
//     one, the transport checksum kept valid (the endpoint's AEAD or MAC sees it, not the
//     kernel's checksum check; shaper=emu only);
//   - delayvar=D, delayvar_every=T (default 100ms): the one-way delay redrawn uniformly from
//     [rtt/2-D, rtt/2+D] every T (packets keep the delay they met, so later ones may overtake);
//   - reorder=P%, reorder_delay=D (default 10ms): hold a packet back D with probability P;
//     reorder=true|false instead lets per-packet jitter reorder packets;
//   - aqm=droptail|drophead|codel|pie|fq_codel, target, interval (CoDel: 5ms, 100ms; PIE:
//     target 15ms, interval = update interval 15ms), ecn=true (mark instead of drop);
//     aqm=cake (shaper=netem only; no queue, target, interval or ecn: CAKE's own);
//   - bleach=ecn|none: clear the IP ECN field of every packet delivered to Not-ECT, the IPv4
//     header checksum kept valid, as middleboxes that rewrite the TOS byte do (RFC 9000 section
//     13.4.2); not with ecn=true in the same direction (shaper=emu only);
//   - outage=ON/OFF (up ON, down OFF, repeating) or outage=exp:ON/OFF (exponential
//     durations), outage_mode=drop|hold (default drop);
//   - rebind=port|addr[@FIRST[/EVERY]] (default @1s/5s): a NAT at the client's edge moves the
//     client's UDP source port (port), or IPv4 address and port (addr), to a fresh binding at
//     FIRST and every EVERY after it (0s: once); datagrams to an old binding are dropped
//     (shaper=emu only);
//   - mtu, shaper (emu|netem|none), seed.
//
// loss, burst, corrupt, delayvar, delayvar_every, reorder, reorder_delay, aqm, target, interval, ecn
// and bleach apply to both directions, or to one with a down. or up. prefix (down.loss=2%).
// Errors are one line naming the bad item and what is accepted.
func Parse(s string) (Spec, error) {
	st := parseState{spec: Spec{Input: s, MTU: DefaultMTU, Shaper: ShaperEmu}}
	items := strings.Split(s, ",")
	if strings.TrimSpace(s) == "" {
		return Spec{}, fmt.Errorf("empty link spec: accepted a preset (%s) or key=value items", presetNames())
	}
	seen := map[string]bool{}
	for i, item := range items {
		item = strings.TrimSpace(item)
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			if i != 0 {
				return Spec{}, fmt.Errorf("bad link item %q: accepted key=value (a preset name may only come first)", item)
			}
			if err := st.preset(item); err != nil {
				return Spec{}, err
			}
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		if err := checkRepeat(seen, key, s); err != nil {
			return Spec{}, err
		}
		seen[key] = true
		if err := st.set(key, strings.TrimSpace(val)); err != nil {
			return Spec{}, err
		}
	}
	if st.spec.Shaper == ShaperNone {
		for _, k := range shapingKeys {
			if seen[k] {
				return Spec{}, fmt.Errorf("link %q shapes nothing (none) but sets %s: accepted none alone, or shaping keys with shaper=emu or netem", s, k)
			}
		}
	}
	return st.finish()
}

// shapingKeys are the keys that have no effect on an unshaped link.
var shapingKeys = []string{"rate", "down", "up", "rtt", "loss", "corrupt", "queue", "jitter", "jitter_dist", "reorder", "mtu", "burst",
	"delayvar", "delayvar_every", "reorder_delay", "aqm", "target", "interval", "ecn", "bleach", "outage", "outage_mode", "rebind"}

// acceptedKeys lists the keys Parse accepts, for error messages.
const acceptedKeys = "rate, down, up, rtt, loss, burst, corrupt, queue, jitter, jitter_dist, reorder, reorder_delay, delayvar, delayvar_every, aqm, target, interval, ecn, bleach, outage, outage_mode, rebind, mtu, shaper, seed (down./up. prefixes on loss, burst, corrupt, delayvar, delayvar_every, reorder, reorder_delay, aqm, target, interval, ecn, bleach)"

// checkRepeat refuses a key given twice, and rate given together with down or up, in spec.
func checkRepeat(seen map[string]bool, key, spec string) error {
	if seen[key] {
		return fmt.Errorf("link key %q given twice in %q: accepted each key once", key, spec)
	}
	if (key == "rate" && (seen["down"] || seen["up"])) || ((key == "down" || key == "up") && seen["rate"]) {
		return fmt.Errorf("link %q sets rate and %s: accepted rate (both directions) or down/up, not both", spec, map[bool]string{true: "down/up", false: key}[key == "rate"])
	}
	return nil
}

// preset loads a preset's items into st.
func (st *parseState) preset(name string) error {
	p, ok := lookupPreset(name)
	if !ok {
		return fmt.Errorf("unknown link preset %q: accepted %s, or key=value items (%s)", name, presetNames(), acceptedKeys)
	}
	if p.Spec == "" {
		st.spec.Shaper = ShaperNone
		return nil
	}
	for _, item := range strings.Split(p.Spec, ",") {
		key, val, _ := strings.Cut(item, "=")
		if err := st.set(key, val); err != nil {
			return fmt.Errorf("preset %s: %w", name, err)
		}
	}
	return nil
}

// set applies one key=value item.
func (st *parseState) set(key, val string) error {
	var err error
	sp := &st.spec
	if dir, k, ok := strings.Cut(key, "."); ok && (dir == "down" || dir == "up") && slices.Contains(dirKeys, k) {
		im := &sp.DownImp
		if dir == "up" {
			im = &sp.UpImp
		}
		if k == "reorder" && isBool(val) {
			return fmt.Errorf("bad %s %q: accepted a percentage (reorder=true, for jitter, applies to both directions)", key, val)
		}
		return setImpair([]*Impair{im}, k, val)
	}
	switch key {
	case "rate":
		if sp.Down, sp.DownImp.Trace, err = parseRateOrTrace(key, val); err == nil {
			sp.Up, sp.UpImp.Trace = sp.Down, sp.DownImp.Trace
		}
	case "down":
		sp.Down, sp.DownImp.Trace, err = parseRateOrTrace(key, val)
	case "up":
		sp.Up, sp.UpImp.Trace, err = parseRateOrTrace(key, val)
	case "reorder":
		if isBool(val) {
			sp.Reorder, _ = strconv.ParseBool(val)
			return nil
		}
		err = setImpair([]*Impair{&sp.DownImp, &sp.UpImp}, key, val)
		if err != nil {
			err = fmt.Errorf("bad reorder %q: accepted a percentage such as 5%% (hold packets back), or true/false (let jitter reorder)", val)
		}
	case "loss", "burst", "corrupt", "delayvar", "delayvar_every", "reorder_delay", "aqm", "target", "interval", "ecn", "bleach":
		err = setImpair([]*Impair{&sp.DownImp, &sp.UpImp}, key, val)
	case "outage":
		hold := sp.Outage.Hold
		sp.Outage, err = parseOutage(val)
		sp.Outage.Hold = hold
	case "rebind":
		sp.Rebind, err = parseRebind(val)
	case "outage_mode":
		switch strings.ToLower(val) {
		case "drop":
			sp.Outage.Hold = false
		case "hold":
			sp.Outage.Hold = true
		default:
			err = fmt.Errorf("bad outage_mode %q: accepted drop or hold", val)
		}
	case "rtt":
		sp.RTT, err = parseDelay("rtt", val)
	case "jitter":
		sp.Jitter, err = parseDelay("jitter", val)
	case "jitter_dist":
		sp.JitterDist, err = parseJitterDist(val)
	case "queue":
		err = st.parseQueue(val)
	case "mtu":
		sp.MTU, err = strconv.Atoi(val)
		if err != nil || sp.MTU < MinMTU || sp.MTU > MaxMTU {
			err = fmt.Errorf("bad mtu %q: accepted an integer number of bytes in %d..%d", val, MinMTU, MaxMTU)
		}
	case "shaper":
		sp.Shaper = strings.ToLower(val)
		if sp.Shaper != ShaperEmu && sp.Shaper != ShaperNetem && sp.Shaper != ShaperNone {
			err = fmt.Errorf("bad shaper %q: accepted emu, netem or none", val)
		}
	case "seed":
		sp.Seed, err = strconv.ParseInt(val, 10, 64)
		if err != nil {
			err = fmt.Errorf("bad seed %q: accepted an integer", val)
		}
	default:
		err = fmt.Errorf("unknown link key %q: accepted %s", key, acceptedKeys)
	}
	return err
}

// parseJitterDist reads a jitter distribution name.
func parseJitterDist(val string) (emu.JitterDist, error) {
	for _, d := range emu.JitterDists {
		if strings.EqualFold(val, d.String()) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("bad jitter_dist %q: accepted uniform, normal, pareto or paretonormal", val)
}

func isBool(val string) bool {
	_, err := strconv.ParseBool(val)
	return err == nil
}

func parseDelay(key, val string) (time.Duration, error) {
	d, err := time.ParseDuration(val)
	if err != nil || d < 0 || d > time.Minute {
		return 0, fmt.Errorf("bad %s %q: accepted a duration in 0..1m such as 50ms", key, val)
	}
	return d, nil
}

func parseLoss(val string) (float64, error) {
	num, pct := strings.CutSuffix(val, "%")
	f, err := strconv.ParseFloat(num, 64)
	if val == "0" {
		return 0, nil
	}
	if !pct || err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("bad loss %q: accepted a percentage in [0%%,100%%] such as 1%% or 0.5%%", val)
	}
	return f / 100, nil
}

// parseQueue reads "1bdp", "0.5bdp", "25pkt" or a size such as "18750B".
func (st *parseState) parseQueue(val string) error {
	st.queueSet = true
	st.bdp, st.queueB, st.spec.QueuePackets = 0, 0, 0
	low := strings.ToLower(val)
	bad := fmt.Errorf("bad queue %q: accepted a positive Nbdp (e.g. 1bdp), Npkt (e.g. 25pkt) or size (e.g. 18750B)", val)
	if num, ok := strings.CutSuffix(low, "bdp"); ok {
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || !(f > 0) || f > 1000 {
			return bad
		}
		st.bdp = f
		return nil
	}
	if num, ok := strings.CutSuffix(low, "pkt"); ok {
		n, err := strconv.Atoi(num)
		if err != nil || n <= 0 || n > 1_000_000 {
			return bad
		}
		st.spec.QueuePackets = n
		return nil
	}
	b, err := ParseByteSize(val)
	if err != nil {
		return bad
	}
	st.queueB = b
	return nil
}

// finish applies defaults and cross-field checks.
func (st *parseState) finish() (Spec, error) {
	sp := st.spec
	if err := sp.checkImpairments(); err != nil {
		return Spec{}, err
	}
	sp.Loss = max(sp.DownImp.Loss, sp.UpImp.Loss)
	cake := sp.DownImp.AQM == emu.CAKE || sp.UpImp.AQM == emu.CAKE
	if cake && st.queueSet {
		return Spec{}, fmt.Errorf("aqm=cake with queue: accepted aqm=cake without queue (CAKE limits the memory its packets occupy, not their bytes or number)")
	}
	if cake && sp.Shaper == ShaperEmu {
		return Spec{}, fmt.Errorf("aqm=cake (CAKE: COBALT with set-associative flow queueing) with shaper=emu: the userspace emulator has no CAKE: accepted aqm=cake with shaper=netem, or aqm=droptail, drophead, codel, pie or fq_codel")
	}
	if !st.queueSet && cake {
		st.bdp, st.queueSet = 0, true // CAKE's own limit; an AQM of the other direction may set its packet limit below
		if limit := max(aqmLimits[sp.DownImp.AQM], aqmLimits[sp.UpImp.AQM]); limit > 0 {
			sp.QueuePackets = limit
		}
	}
	if !st.queueSet {
		st.bdp = DefaultQueueBDP
		if limit := max(aqmLimits[sp.DownImp.AQM], aqmLimits[sp.UpImp.AQM]); limit > 0 {
			st.bdp, sp.QueuePackets, st.queueSet = 0, limit, true
		}
	}
	sp.QueueBDP = st.bdp
	if !sp.Shaped() {
		sp.QueueBDP = 0
	}
	switch {
	case st.queueB > 0:
		sp.QueueBytes = st.queueB
	case st.bdp > 0 && sp.Down > 0:
		sp.QueueBytes = st.bdpQueue(sp.Down, sp.RTT)
		sp.QueueFloored = !st.queueSet && sp.QueueBytes > ByteSize(math.Round(st.bdp*float64(BDP(sp.Down, sp.RTT))))
		if st.queueSet && sp.QueueBytes < ByteSize(sp.MTU) {
			return Spec{}, fmt.Errorf("queue %gbdp at down=%s rtt=%s is %s, less than one %d-byte packet: accepted a queue of at least the MTU", st.bdp, sp.Down, sp.RTT, sp.QueueBytes, sp.MTU)
		}
	}
	if st.queueB > 0 && st.queueB < ByteSize(sp.MTU) {
		return Spec{}, fmt.Errorf("queue %s is less than one %d-byte packet: accepted a queue of at least the MTU", st.queueB, sp.MTU)
	}
	if sp.Shaper == ShaperNetem {
		if err := NetemSupported(sp); err != nil {
			return Spec{}, err
		}
	}
	return sp, nil
}

// checkImpairments refuses settings that contradict each other or cannot be emulated.
func (sp *Spec) checkImpairments() error {
	oneWay := sp.RTT / 2
	if sp.JitterDist != emu.JitterUniform && sp.Jitter == 0 {
		return fmt.Errorf("jitter_dist=%s without jitter: accepted jitter_dist together with jitter=D", sp.JitterDist)
	}
	if sp.Jitter > oneWay {
		return fmt.Errorf("jitter %s exceeds the one-way delay %s (rtt/2): accepted jitter <= rtt/2, so no delay falls below 0", sp.Jitter, oneWay)
	}
	for _, d := range []struct {
		name string
		im   *Impair
		rate Rate
	}{{"down", &sp.DownImp, sp.Down}, {"up", &sp.UpImp, sp.Up}} {
		if err := d.im.check(d.name, oneWay); err != nil {
			return err
		}
		if d.im.AQM != emu.DropTail && d.rate == 0 {
			return fmt.Errorf("%s: aqm=%s on an unlimited direction: accepted an AQM with a rate or trace (a queue only forms at a bottleneck)", d.name, d.im.AQM)
		}
	}
	if sp.Outage.Hold && sp.Outage.Off == 0 {
		return fmt.Errorf("outage_mode=hold without outage: accepted outage_mode together with outage=ON/OFF")
	}
	return nil
}

// bdpQueue sizes a queue of st.bdp BDPs at rate; when the queue came from the default it is
// floored at DefaultQueueFloor.
func (st *parseState) bdpQueue(rate Rate, rtt time.Duration) ByteSize {
	q := ByteSize(math.Round(st.bdp * float64(BDP(rate, rtt))))
	if floor := DefaultQueueFloor(rate, st.spec.MTU); !st.queueSet && q < floor {
		q = floor
	}
	return q
}

// DefaultQueueFloor is the smallest default queue in bytes at rate (bit/s) and mtu (bytes):
// the larger of MinDefaultQueuePackets packets and DefaultQueueFloorTime at the rate (see
// there for the rule's source). A queue given explicitly is never floored.
func DefaultQueueFloor(rate Rate, mtu int) ByteSize {
	return max(ByteSize(MinDefaultQueuePackets*mtu), BDP(rate, DefaultQueueFloorTime))
}

// UpQueueBytes is the droptail limit of the up direction in bytes: with queue=Nbdp it is N BDPs
// at the up rate, floored at MinDefaultQueuePackets MTU-sized packets (the up direction of an
// asymmetric link often has a BDP below one packet), else QueueBytes.
func (s Spec) UpQueueBytes() ByteSize {
	if s.QueueBDP <= 0 || s.Up <= 0 || s.QueuePackets > 0 {
		return s.QueueBytes
	}
	if s.Up == s.Down {
		return s.QueueBytes
	}
	st := parseState{spec: s, bdp: s.QueueBDP, queueSet: true}
	q := st.bdpQueue(s.Up, s.RTT)
	if floor := ByteSize(MinDefaultQueuePackets * s.MTU); q < floor {
		q = floor
	}
	if s.QueueFloored {
		q = max(q, DefaultQueueFloor(s.Up, s.MTU))
	}
	return q
}

// jitterDistName is d's name for the record, "" for the default uniform.
func jitterDistName(d emu.JitterDist) string {
	if d == emu.JitterUniform {
		return ""
	}
	return d.String()
}

// Shaped reports whether the spec emulates anything (shaper is not "none").
func (s Spec) Shaped() bool { return s.Shaper != ShaperNone }

// String gives the canonical key=value form of s (parsable by Parse).
func (s Spec) String() string {
	if !s.Shaped() {
		return "none"
	}
	var b []string
	rate := func(r Rate, trace string) string {
		if trace != "" {
			return "trace:" + trace
		}
		return r.String()
	}
	if s.Down == s.Up && s.Down > 0 && s.DownImp.Trace == s.UpImp.Trace {
		b = append(b, "rate="+rate(s.Down, s.DownImp.Trace))
	} else {
		if s.Down > 0 {
			b = append(b, "down="+rate(s.Down, s.DownImp.Trace))
		}
		if s.Up > 0 {
			b = append(b, "up="+rate(s.Up, s.UpImp.Trace))
		}
	}
	b = append(b, "rtt="+s.RTT.String())
	down, up := s.DownImp, s.UpImp
	down.Trace, up.Trace = "", ""
	if down == up && !(s.Reorder && down.ReorderProb > 0) { // reorder=P% and reorder=true share a key
		b = append(b, down.items("")...)
	} else {
		b = append(b, down.items("down.")...)
		b = append(b, up.items("up.")...)
	}
	switch {
	case s.QueueFloored: // the default queue, floored: no key gives it back
	case s.QueuePackets > 0:
		b = append(b, "queue="+strconv.Itoa(s.QueuePackets)+"pkt")
	case s.QueueBDP > 0 && s.QueueBytes == ByteSize(math.Round(s.QueueBDP*float64(BDP(s.Down, s.RTT)))):
		b = append(b, "queue="+strconv.FormatFloat(s.QueueBDP, 'f', -1, 64)+"bdp")
	case s.QueueBytes > 0:
		b = append(b, "queue="+s.QueueBytes.String())
	}
	if s.Jitter > 0 {
		b = append(b, "jitter="+s.Jitter.String())
	}
	if s.JitterDist != emu.JitterUniform {
		b = append(b, "jitter_dist="+s.JitterDist.String())
	}
	if s.Reorder {
		b = append(b, "reorder=true")
	}
	b = append(b, outageItems(s.Outage)...)
	b = append(b, rebindItems(s.Rebind)...)
	if s.MTU != DefaultMTU {
		b = append(b, "mtu="+strconv.Itoa(s.MTU))
	}
	b = append(b, "shaper="+s.Shaper)
	if s.Seed != 0 {
		b = append(b, "seed="+strconv.FormatInt(s.Seed, 10))
	}
	return strings.Join(b, ",")
}

// Result describes s as a result.Link for records.
func (s Spec) Result() result.Link {
	l := result.Link{
		Spec:         s.Input,
		DownBps:      int64(s.Down),
		UpBps:        int64(s.Up),
		RTTMs:        quantity.Ms(s.RTT),
		Loss:         s.Loss,
		QueueBytes:   int64(s.QueueBytes),
		QueueFloored: s.QueueFloored,
		QueuePackets: s.QueuePackets,
		JitterMs:     quantity.Ms(s.Jitter),
		JitterDist:   jitterDistName(s.JitterDist),
		MTU:          s.MTU,
		Shaper:       s.Shaper,
		Reorder:      s.Reorder,
		Down:         s.DownImp.result(),
		Up:           s.UpImp.result(),
		OutageOnMs:   quantity.Ms(s.Outage.On),
		OutageOffMs:  quantity.Ms(s.Outage.Off),
		OutageRandom: s.Outage.Random,
	}
	if s.Rebind.Enabled() {
		l.Rebind = s.Rebind.Mode.String()
		l.RebindFirstMs, l.RebindEveryMs = quantity.Ms(s.Rebind.First), quantity.Ms(s.Rebind.Every)
	}
	if s.Outage.Off > 0 {
		l.OutageMode = "drop"
		if s.Outage.Hold {
			l.OutageMode = "hold"
		}
	}
	return l
}

// InputFiles returns the files the LINK spec reads: its trace:FILE paths, down then up, each
// once; none for a spec that does not parse (Parse reports that).
func InputFiles(spec string) []string {
	sp, err := Parse(spec)
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range []string{sp.DownImp.Trace, sp.UpImp.Trace} {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// PartialNote says what the shaped LINK spec link leaves at its default without a word: a
// direction without a rate is unlimited, a link without rtt has no delay. It returns one line
// to warn with, "" when the spec sets both (or is unshaped, or does not parse: Parse
// reports that).
func PartialNote(link string) string {
	sp, err := Parse(link)
	if err != nil || !sp.Shaped() {
		return ""
	}
	var unset []string
	switch {
	case sp.Down == 0 && sp.Up == 0:
	case sp.Down == 0:
		unset = append(unset, "down is unlimited (no down= or rate=)")
	case sp.Up == 0:
		unset = append(unset, "up is unlimited (no up= or rate=)")
	}
	if sp.RTT == 0 {
		unset = append(unset, "rtt is 0 (no rtt=: no added delay)")
	}
	if len(unset) == 0 {
		return ""
	}
	return fmt.Sprintf("link %q: %s; give them if that is not meant", link, strings.Join(unset, ", "))
}
