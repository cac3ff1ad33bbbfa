// Package netem builds the tc netem configuration of a link as command lines run through a seam.
//
// A link is a veth pair: the host end stays in the host namespace, the client end goes into the
// client namespace; each end's egress gets a netem qdisc (Linux tc-netem(8)) with the direction's
// one-way delay, jitter, loss and rate. Plan and Teardown are pure: tests compare their output
// exactly, without root and without the kernel module. Runner executes them.
package netem

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Direction is one direction's netem settings.
type Direction struct {
	// Rate is the bottleneck rate in bit/s; 0 = unlimited.
	Rate int64
	// Delay is the one-way delay; Jitter its uniform variation (netem "delay D J").
	Delay, Jitter time.Duration
	// Loss is the Bernoulli loss probability in [0, 1] (ignored when GE is set).
	Loss float64
	// GE is the Gilbert-Elliott model as netem's four probabilities in [0, 1]: p, r, 1-h, 1-k
	// ("loss gemodel p r 1-h 1-k", tc-netem(8)); all 0 = not used.
	GE [4]float64
	// ReorderProb, when above 0, sends that fraction of packets with no delay and delays the
	// others by Delay ("reorder P% gap 1", tc-netem(8)).
	ReorderProb float64
	// QueueBytes or QueuePackets is the droptail queue the spec asks for (bytes win).
	QueueBytes   int64
	QueuePackets int
}

// Config describes one link.
type Config struct {
	// Namespace is the client namespace (it must exist before Plan's commands run).
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

// minPacket is the smallest packet the delay-line sizing assumes (an IPv4 TCP ACK with
// options is 52 bytes; 64 leaves room).
const minPacket = 64

// unlimitedLimit is the netem limit, in packets, when the rate is unlimited.
const unlimitedLimit = 100000

// Limit is the netem "limit" in packets for d: the droptail queue in MTU-sized packets plus the
// packets the delay line may hold, rate/8 x (delay + jitter) / 64 bytes, so netem never drops a
// packet the spec did not ask to drop (netem's default limit of 1000 packets does, whatever the
// rate and delay). With an unlimited rate it is 100000.
func Limit(d Direction, mtu int) int {
	if d.Rate <= 0 {
		return unlimitedLimit
	}
	queue := d.QueuePackets
	if d.QueueBytes > 0 {
		queue = int(math.Ceil(float64(d.QueueBytes) / float64(mtu)))
	}
	inFlight := float64(d.Rate) / 8 * (d.Delay + d.Jitter).Seconds() / minPacket
	return queue + int(math.Ceil(inFlight)) + 1
}

// qdiscArgs is the netem part of a tc command line for d.
func qdiscArgs(d Direction, mtu int) []string {
	args := []string{"netem", "delay", usec(d.Delay)}
	if d.Jitter > 0 { // netem's default jitter distribution is uniform: no table needed
		args = append(args, usec(d.Jitter))
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
	if d.Rate > 0 {
		args = append(args, "rate", strconv.FormatInt(d.Rate, 10)+"bit")
	}
	return append(args, "limit", strconv.Itoa(Limit(d, mtu)))
}

func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

func usec(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + "us" }

// Plan returns the commands that build the link, in order: the veth pair, point-to-point
// addresses on both ends (no default route: the client reaches only the host address), offloads off (so netem sees MTU-sized packets) and one netem qdisc per end.
func Plan(c Config) [][]string {
	mtu := strconv.Itoa(c.MTU)
	host, client := c.HostAddr.String()+"/32", c.ClientAddr.String()+"/32"
	nsIP := func(args ...string) []string { return append([]string{"ip", "-n", c.Namespace}, args...) }
	return [][]string{
		{"ip", "link", "add", c.HostDev, "mtu", mtu, "type", "veth", "peer", "name", c.ClientDev, "mtu", mtu, "netns", c.Namespace},
		{"ethtool", "-K", c.HostDev, "tso", "off", "gso", "off", "gro", "off"},
		{"ip", "netns", "exec", c.Namespace, "ethtool", "-K", c.ClientDev, "tso", "off", "gso", "off", "gro", "off"},
		{"ip", "addr", "add", host, "peer", client, "dev", c.HostDev},
		{"ip", "link", "set", c.HostDev, "up"},
		nsIP("addr", "add", client, "peer", host, "dev", c.ClientDev),
		nsIP("link", "set", c.ClientDev, "up"),
		append([]string{"tc", "qdisc", "replace", "dev", c.HostDev, "root"}, qdiscArgs(c.Down, c.MTU)...),
		append([]string{"tc", "-n", c.Namespace, "qdisc", "replace", "dev", c.ClientDev, "root"}, qdiscArgs(c.Up, c.MTU)...),
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
func (ExecRunner) Run(ctx context.Context, argv []string) error {
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
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
