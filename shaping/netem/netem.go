// Package netem builds the tc configuration of a link as command lines run through a seam.
//
// A link is a veth pair: the host end stays in the host namespace, the client end goes into the
// client namespace. Each end's egress carries one direction's bottleneck, modelled the way tc
// testbeds do (tc-netem(8), "rate limiting with tbf"; the Linux Foundation netem page): a root
// netem qdisc for the one-way delay, jitter, loss and reordering, and under it a token-bucket
// rate limiter (tc-tbf(8)) whose byte-limited FIFO is the bottleneck's droptail queue, or whose
// child is the kernel AQM the spec names (codel, pie, fq_codel: tc-codel(8), tc-pie(8),
// tc-fq_codel(8)) or a packet FIFO; CAKE (tc-cake(8)) is its own rate limiter and replaces the
// token bucket. netem's own "limit" counts the packets in its delay line as
// well as any queue, so netem alone cannot model a byte-limited buffer: here its limit only
// bounds the delay line and never drops. A size table (tc-stab(8), overhead -14) makes every
// qdisc count IP bytes, as the rate and queue of a LINK spec do, not the veth's Ethernet frames.
// Build and Teardown are pure: tests compare their output exactly, without root and without the
// kernel modules. Runner executes them.
package netem

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Queue disciplines a Direction may name (AQM); "" is the droptail FIFO.
const (
	DropTail = ""
	DropHead = "drophead" // pfifo_head_drop: a full queue drops its oldest packet
	CoDel    = "codel"
	PIE      = "pie"
	FQCoDel  = "fq_codel"
	// CAKE is Linux's sch_cake (tc-cake(8); Høiland-Jørgensen, Täht and Morton, "Piece of CAKE",
	// IEEE LANMAN 2018): its own deficit-mode shaper at the rate, COBALT AQM and set-associative
	// flow queueing. It replaces the token bucket (see queueArgs).
	CAKE = "cake"
)

// Direction is one direction's tc settings.
type Direction struct {
	// Rate is the bottleneck rate in bit/s (IP bytes); 0 = unlimited (no rate limiter, no queue).
	Rate int64
	// Delay is the one-way delay; Jitter its variation (netem "delay D J"), uniform in +-J or
	// drawn from JitterDist's table.
	Delay, Jitter time.Duration
	// JitterDist is netem's jitter distribution: "" or "uniform" (netem's default, no table),
	// "normal", "pareto" or "paretonormal" ("distribution NAME": tc reads NAME.dist from its
	// lib directory, iproute2's tables).
	JitterDist string
	// Ordered keeps packets in order under jitter (a packet never leaves before an earlier one):
	// netem then gets a rate far above any link's (100 Gbit/s), which makes each packet's send
	// time at least its predecessor's (sch_netem's rate reference point) at 0.12 us per 1500 B.
	Ordered bool
	// Loss is the Bernoulli loss probability in [0, 1] (ignored when GE is set).
	Loss float64
	// GE is the Gilbert-Elliott model as netem's four probabilities in [0, 1]: p, r, 1-h, 1-k
	// ("loss gemodel p r 1-h 1-k", tc-netem(8)); all 0 = not used.
	GE [4]float64
	// ReorderProb, when above 0, sends that fraction of packets with no delay and delays the
	// others by Delay ("reorder P% gap 1", tc-netem(8)).
	ReorderProb float64
	// QueueBytes or QueuePackets is the queue the spec asks for (bytes win; IP bytes).
	QueueBytes   int64
	QueuePackets int
	// AQM is the queue discipline: DropTail, DropHead, CoDel, PIE, FQCoDel or CAKE (CAKE
	// ignores the queue fields and Target, Interval and ECN: it keeps its own memory limit,
	// COBALT's 5 ms / 100 ms, and marks ECN-capable packets).
	AQM string
	// Target and Interval are CoDel's and FQ-CoDel's target and interval, or PIE's target and
	// update interval (tupdate); 0 = the qdisc's default (5 ms/100 ms, 15 ms/15 ms).
	Target, Interval time.Duration
	// ECN marks ECN-capable packets instead of dropping them (codel, pie, fq_codel "ecn").
	ECN bool
}

// Config describes one link.
type Config struct {
	// Namespace is the client namespace (it must exist before Build's commands run).
	Namespace string
	// HostDev and ClientDev name the veth ends.
	HostDev, ClientDev string
	// HostAddr and ClientAddr are the point-to-point addresses.
	HostAddr, ClientAddr netip.Addr
	// MTU is the link MTU in bytes.
	MTU int
	// Down is the host-to-client direction (host end egress), Up the reverse (client egress).
	Down, Up Direction
}

// DelayLineLimit is netem's "limit" in packets: the delay line ahead of the rate limiter holds
// what the sender sends within one delay, bounded by the sender's window, not by the link's
// rate; 100000 packets is 150 MB of 1500-byte packets, and it never drops a packet the spec did
// not ask to drop (netem's default limit of 1000 does at high rate x delay).
const DelayLineLimit = 100000

// ethOverhead is the Ethernet header a veth frame carries beyond its IP packet; the size table
// subtracts it so that rates and queues count IP bytes.
const ethOverhead = 14

// orderedRate is netem's rate when Ordered is set: far above any emulated link.
const orderedRate = "100gbit"

// Burst is the token bucket's depth in bytes for d: two MTU-sized packets or 1 ms at the rate,
// whichever is more. tc-tbf(8) requires at least one packet; the second absorbs a late timer
// (a tbf whose bucket holds one packet loses, as link time, every microsecond its watchdog fires
// late: 12 % of the rate with 0.5 ms lateness at 3 Mbit/s, measured in a qemu TCG guest).
func Burst(d Direction, mtu int) int64 {
	return max(2*int64(mtu), d.Rate/8/1000)
}

// QueueLimitPackets is the packet limit of a packet-counted queue (pfifo, pfifo_head_drop or an
// AQM): QueuePackets, or QueueBytes in MTU-sized packets rounded up.
func QueueLimitPackets(d Direction, mtu int) int {
	if d.QueuePackets > 0 {
		return d.QueuePackets
	}
	return int((d.QueueBytes + int64(mtu) - 1) / int64(mtu))
}

// netemArgs is the root netem qdisc for d: size table, delay, jitter, loss, reordering.
func netemArgs(d Direction) []string {
	args := []string{"handle", "1:", "stab", "overhead", "-" + strconv.Itoa(ethOverhead), "netem", "delay", usec(d.Delay)}
	if d.Jitter > 0 { // netem's default jitter distribution is uniform: no table needed
		args = append(args, usec(d.Jitter))
		if d.JitterDist != "" && d.JitterDist != "uniform" {
			args = append(args, "distribution", d.JitterDist)
		}
	}
	switch {
	case d.GE != [4]float64{}:
		args = append(args, "loss", "gemodel")
		for _, v := range d.GE {
			args = append(args, pct(v))
		}
	case d.Loss > 0:
		args = append(args, "loss", "random", pct(d.Loss))
	}
	if d.ReorderProb > 0 {
		args = append(args, "reorder", pct(d.ReorderProb), "gap", "1")
	}
	if d.Ordered && d.Jitter > 0 && d.ReorderProb == 0 {
		args = append(args, "rate", orderedRate)
	}
	return append(args, "limit", strconv.Itoa(DelayLineLimit))
}

// queueArgs are the qdiscs under netem for d (parent 1:1): a tbf at the rate whose own FIFO is
// the byte-limited droptail queue, or a tbf with a packet FIFO or AQM child (handle 20:), or
// for CAKE a cake at the rate in place of the tbf. Nothing when the rate is unlimited.
//
// CAKE is its own rate limiter ("bandwidth"): a deficit-mode shaper that schedules each packet
// at its transmission time, with no token bucket and no burst, which is the spec's serializing
// rate; COBALT then measures a packet's sojourn time when the shaper releases it, as RFC 8289
// does at the start of transmission. Under a tbf, by contrast, cake would be dequeued early
// (tbf peeks at its child's head packet, which then waits for tokens). "raw" makes cake count
// qdisc_pkt_len, which the root's size table has already made the IP length (tc-cake(8):
// "raw ... the packet size reported by Linux will be used directly"); its other settings stay
// at cake's defaults (diffserv3, triple-isolate, memlimit from the rate).
func queueArgs(d Direction, mtu int) [][]string {
	if d.Rate <= 0 {
		return nil
	}
	if d.AQM == CAKE {
		return [][]string{{"parent", "1:1", "handle", "10:", "cake", "bandwidth", strconv.FormatInt(d.Rate, 10) + "bit", "raw"}}
	}
	tbf := []string{"parent", "1:1", "handle", "10:", "tbf", "rate", strconv.FormatInt(d.Rate, 10) + "bit",
		"burst", strconv.FormatInt(Burst(d, mtu), 10)}
	if d.AQM == DropTail && d.QueueBytes > 0 {
		return [][]string{append(tbf, "limit", strconv.FormatInt(d.QueueBytes, 10))}
	}
	// The child replaces tbf's FIFO; tbf still needs a limit of its own, which it then ignores.
	tbf = append(tbf, "limit", strconv.Itoa(mtu))
	n := strconv.Itoa(QueueLimitPackets(d, mtu))
	child := []string{"parent", "10:1", "handle", "20:"}
	ecn := "noecn"
	if d.ECN {
		ecn = "ecn"
	}
	switch d.AQM {
	case DropTail:
		child = append(child, "pfifo", "limit", n)
	case DropHead:
		child = append(child, "pfifo_head_drop", "limit", n)
	case CoDel, FQCoDel:
		child = append(child, d.AQM, "limit", n, "target", usec(cmp.Or(d.Target, 5*time.Millisecond)),
			"interval", usec(cmp.Or(d.Interval, 100*time.Millisecond)), ecn)
	case PIE:
		child = append(child, "pie", "limit", n, "target", usec(cmp.Or(d.Target, 15*time.Millisecond)),
			"tupdate", usec(cmp.Or(d.Interval, 15*time.Millisecond)), ecn)
	}
	return [][]string{tbf, child}
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

func usec(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + "us" }

// Modules are the kernel modules Build's qdiscs and devices need (sch_cake is added for a CAKE
// link only); Build loads them with modprobe first (a kernel loads qdisc modules on demand only where its modprobe helper can reach them).
var Modules = []string{"veth", "sch_netem", "sch_tbf", "sch_codel", "sch_pie", "sch_fq_codel"}

// modules are the kernel modules c's qdiscs need: Modules, and sch_cake when a direction uses it.
func modules(c Config) []string {
	m := slices.Clone(Modules)
	if c.Down.AQM == CAKE || c.Up.AQM == CAKE {
		m = append(m, "sch_cake")
	}
	return m
}

// EndMAC is the MAC address Build gives the veth end whose address is a: locally administered
// and unicast (02:00), then a's four IPv4 bytes ("02:00:64:40:00:05" for 100.64.0.5), so the
// two ends of a link differ and a record's neighbour entries name their addresses (an IPv6
// address gives its last four bytes).
func EndMAC(a netip.Addr) string {
	b := a.As16()
	return fmt.Sprintf("02:00:%02x:%02x:%02x:%02x", b[12], b[13], b[14], b[15])
}

// Build returns the commands that build the link, in order: the modules (sch_cake too for CAKE), the veth pair with
// gso_max_segs 1 (Linux TCP builds GSO packets whatever the device's offloads, at least
// tcp_min_tso_segs = 2 segments, and they are split only after the qdiscs: the kernel's codel saw
// 2948-byte packets on a 1500-byte link without it) and offloads off, so the qdiscs see
// MTU-sized packets, point-to-point addresses on both ends (no
// default route: the client reaches only the host address), then per end the root netem and
// the rate limiter with its queue (Down on the host end, Up on the client end).
//
// The link carries only what its endpoints send: each end has a fixed MAC address (EndMAC) and a
// permanent neighbour entry for the other end, so no ARP crosses it, and the host end has no
// IPv6 link-local address (addrgenmode none; the client namespace has IPv6 off), so no neighbour
// discovery, DAD or router solicitation does either. netem would otherwise apply the spec's
// loss and delay to ARP: a lost ARP request holds the first packet to a new neighbour for
// the kernel's 1 s retransmission time (a 387 ms late idle probe was seen on a 2 % loss link),
// which an L3 emulator (a TUN device: pltlab's, Mahimahi's) never does.
func Build(c Config) [][]string {
	mtu := strconv.Itoa(c.MTU)
	host, client := c.HostAddr.String()+"/32", c.ClientAddr.String()+"/32"
	nsIP := func(args ...string) []string { return append([]string{"ip", "-n", c.Namespace}, args...) }
	hostMAC, clientMAC := EndMAC(c.HostAddr), EndMAC(c.ClientAddr)
	plan := [][]string{
		append([]string{"modprobe", "-a"}, modules(c)...),
		{"ip", "link", "add", c.HostDev, "address", hostMAC, "mtu", mtu, "gso_max_segs", "1", "type", "veth",
			"peer", "name", c.ClientDev, "address", clientMAC, "mtu", mtu, "gso_max_segs", "1", "netns", c.Namespace},
		{"ethtool", "-K", c.HostDev, "tso", "off", "gso", "off", "gro", "off"},
		{"ip", "netns", "exec", c.Namespace, "ethtool", "-K", c.ClientDev, "tso", "off", "gso", "off", "gro", "off"},
		{"ip", "link", "set", c.HostDev, "addrgenmode", "none"},
		{"ip", "addr", "add", host, "peer", client, "dev", c.HostDev},
		{"ip", "link", "set", c.HostDev, "up"},
		{"ip", "neigh", "replace", c.ClientAddr.String(), "lladdr", clientMAC, "dev", c.HostDev, "nud", "permanent"},
		nsIP("addr", "add", client, "peer", host, "dev", c.ClientDev),
		nsIP("link", "set", c.ClientDev, "up"),
		nsIP("neigh", "replace", c.HostAddr.String(), "lladdr", hostMAC, "dev", c.ClientDev, "nud", "permanent"),
	}
	for _, end := range []struct {
		tc  []string
		dev string
		d   Direction
	}{{[]string{"tc"}, c.HostDev, c.Down}, {[]string{"tc", "-n", c.Namespace}, c.ClientDev, c.Up}} {
		qd := func(verb string, args []string) []string {
			return append(append(append([]string{}, end.tc...), "qdisc", verb, "dev", end.dev), args...)
		}
		plan = append(plan, qd("replace", append([]string{"root"}, netemArgs(end.d)...)))
		for _, q := range queueArgs(end.d, c.MTU) {
			plan = append(plan, qd("add", q))
		}
	}
	return plan
}

// Show returns the commands that print the kernel's view of the link's qdisc trees in detail
// (host end, then client end; -d adds the size table and tbf's limit), for the record.
func Show(c Config) [][]string {
	return [][]string{
		{"tc", "-d", "qdisc", "show", "dev", c.HostDev},
		{"tc", "-d", "-n", c.Namespace, "qdisc", "show", "dev", c.ClientDev},
	}
}

// Teardown returns the commands that remove the link (deleting one veth end removes both).
func Teardown(c Config) [][]string {
	return [][]string{{"ip", "link", "del", c.HostDev}}
}

// Runner runs one command line. Tests record the calls instead.
type Runner interface {
	Run(ctx context.Context, argv []string) error
}

// ExecRunner runs command lines with os/exec; a failure includes the command's output.
type ExecRunner struct{}

// Run executes argv.
func (r ExecRunner) Run(ctx context.Context, argv []string) error {
	_, err := r.Output(ctx, argv)
	return err
}

// Output executes argv and returns its standard output.
func (ExecRunner) Output(ctx context.Context, argv []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)+stderr.String()))
	}
	return out, nil
}

// Outputter is a Runner that also returns a command's standard output (for Show).
type Outputter interface {
	Runner
	Output(ctx context.Context, argv []string) ([]byte, error)
}

// ErrUnavailable means the running kernel has no sch_netem, built in or as a module.
var ErrUnavailable = errors.New("sch_netem not available in the running kernel")

// Available reports whether the kernel can provide the netem qdisc: it is loaded
// (/sys/module/sch_netem), built in (modules.builtin) or present as a module file that the
// kernel loads on first use. It looks at files only and returns ErrUnavailable otherwise.
func Available() error {
	return available("/sys/module", "/lib/modules/"+kernelRelease())
}

func available(sysModule, modDir string) error {
	if _, err := os.Stat(filepath.Join(sysModule, "sch_netem")); err == nil {
		return nil
	}
	if b, err := os.ReadFile(filepath.Join(modDir, "modules.builtin")); err == nil && strings.Contains(string(b), "/sch_netem.ko") {
		return nil
	}
	if m, _ := filepath.Glob(filepath.Join(modDir, "kernel", "net", "sched", "sch_netem.ko*")); len(m) > 0 {
		return nil
	}
	return ErrUnavailable
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Stats returns the commands that print the counters of the link's qdiscs as JSON (host end,
// then client end): "tc -s -j qdisc show" (iproute2 5.x and later), parsed by ParseStats.
func Stats(c Config) [][]string {
	return [][]string{
		{"tc", "-s", "-j", "qdisc", "show", "dev", c.HostDev},
		{"tc", "-s", "-j", "-n", c.Namespace, "qdisc", "show", "dev", c.ClientDev},
	}
}

// QdiscStats is one qdisc's counters as the kernel keeps them (struct gnet_stats_basic and
// gnet_stats_queue, printed by "tc -s"): cumulative since the qdisc was created, except
// Backlog and Qlen, which are its queue at the moment it was read.
type QdiscStats struct {
	// Dev is the device it is attached to (set by the caller: tc leaves it out for one device).
	Dev string `json:"dev"`
	// Kind is the qdisc ("netem", "tbf", "codel", ...), Handle its handle ("1:"), Parent its
	// parent ("1:1"; "" for the root).
	Kind   string `json:"kind"`
	Handle string `json:"handle"`
	Parent string `json:"parent"`
	// Bytes and Packets are what it has sent (bytes as its size table counts them).
	Bytes   int64 `json:"bytes"`
	Packets int64 `json:"packets"`
	// Drops counts the packets it dropped (netem: its random and Gilbert-Elliott losses and
	// delay-line overflows; tbf: its FIFO's tail drops; an AQM: its AQM and overflow drops).
	Drops int64 `json:"drops"`
	// Overlimits counts the times it held a packet back over its rate (tbf: the bucket had too
	// few tokens) or, for an AQM, its dropping decisions.
	Overlimits int64 `json:"overlimits"`
	// Requeues counts packets the device refused and the qdisc took back.
	Requeues int64 `json:"requeues"`
	// Backlog is the bytes queued in it (and its children) when read, Qlen the packets.
	Backlog int64 `json:"backlog"`
	Qlen    int64 `json:"qlen"`
}

// ParseStats decodes the output of one Stats command: a JSON array of qdiscs. It returns an
// error naming the output when it is not that.
func ParseStats(b []byte) ([]QdiscStats, error) {
	var qs []QdiscStats
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("tc -s -j qdisc output %.80q: %w", b, err)
	}
	return qs, nil
}
