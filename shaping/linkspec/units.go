package linkspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate is a link rate in bit/s. Its text form is a decimal number with a unit: bit, kbit
// (10^3), mbit (10^6) or gbit (10^9), as in tc(8): "3mbit", "1.5mbit", "500kbit".
// Rate implements pflag.Value (String, Set, Type) so it can be a command-line flag.
type Rate int64

// Common rates.
const (
	BitPerSecond Rate = 1
	Kbit              = 1000 * BitPerSecond
	Mbit              = 1000 * Kbit
	Gbit              = 1000 * Mbit
	// MinRate is the lowest bottleneck rate accepted: 8 kbit/s, 1.5 s per 1500-byte packet
	// (WebPageTest's slowest profile, Dial, is 30 kbit/s up).
	MinRate = 8 * Kbit
)

var rateUnits = []struct {
	name string
	mult Rate
}{{"gbit", Gbit}, {"mbit", Mbit}, {"kbit", Kbit}, {"bit", BitPerSecond}}

// ParseRate parses a rate such as "3mbit", "1.5mbit", "500kbit", "1gbit" or "9600bit".
// Units are case-insensitive; the value must be positive and at most 1000gbit.
//
// Rates below MinRate are refused: a 1500-byte packet would take longer than 1.5 s to serialize.
func ParseRate(s string) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range rateUnits {
		num, ok := strings.CutSuffix(t, u.name)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			break
		}
		r := math.Round(f * float64(u.mult))
		if r < float64(MinRate) || r > float64(1000*Gbit) {
			return 0, fmt.Errorf("rate %q out of range: accepted 8kbit..1000gbit", s)
		}
		return Rate(r), nil
	}
	return 0, fmt.Errorf("bad rate %q: accepted a positive number with unit bit, kbit, mbit or gbit, e.g. 3mbit", s)
}

// String gives the rate in the largest unit that keeps it short: "3mbit", "1.5mbit", "384kbit".
func (r Rate) String() string {
	for _, u := range rateUnits {
		if r >= u.mult && (r*1000)%u.mult == 0 {
			return strconv.FormatFloat(float64(r)/float64(u.mult), 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(int64(r), 10) + "bit"
}

// Set parses s like ParseRate (pflag.Value).
func (r *Rate) Set(s string) error {
	v, err := ParseRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Type names the flag type (pflag.Value).
func (r *Rate) Type() string { return "rate" }

// Transmit is the time r needs to serialize n bytes (n*8/r); 0 when r is 0 (unlimited).
func (r Rate) Transmit(n ByteSize) time.Duration {
	if r <= 0 {
		return 0
	}
	return time.Duration(int64(n) * 8 * int64(time.Second) / int64(r))
}

// ByteSize is a size in bytes. Its text form is a number with a unit: B, KB (10^3), KiB (2^10),
// MB (10^6), MiB (2^20), as in the page SPEC grammar: "18750B", "64KiB".
type ByteSize int64

var byteUnits = []struct {
	name string
	mult float64
}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"kb", 1e3}, {"mb", 1e6}, {"b", 1}}

// ParseByteSize parses a positive size such as "18750B", "18.75KB" or "64KiB".
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(t, u.name)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(f) || f*u.mult < 1 || f*u.mult > 1<<40 {
			break
		}
		return ByteSize(math.Round(f * u.mult)), nil
	}
	return 0, fmt.Errorf("bad size %q: accepted a positive number with unit B, KB, KiB, MB or MiB, e.g. 18750B", s)
}

// String gives the size in bytes, e.g. "18750B".
func (b ByteSize) String() string { return strconv.FormatInt(int64(b), 10) + "B" }

// Set parses s like ParseByteSize (pflag.Value).
func (b *ByteSize) Set(s string) error {
	v, err := ParseByteSize(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type names the flag type (pflag.Value).
func (b *ByteSize) Type() string { return "size" }

// BDP is the bandwidth-delay product of rate and rtt in bytes: rate/8 x RTT (RFC 6349 section 2,
// "BDP = RTT x BB / 8"). It rounds to the nearest byte.
func BDP(rate Rate, rtt time.Duration) ByteSize {
	return ByteSize(math.Round(float64(rate) / 8 * rtt.Seconds()))
}
