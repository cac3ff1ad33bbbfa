package linkspec

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		str  string
	}{
		{"3mbit", 3 * Mbit, "3mbit"},
		{"1.5Mbit", 1500 * Kbit, "1.5mbit"},
		{"384kbit", 384 * Kbit, "384kbit"},
		{"1gbit", Gbit, "1gbit"},
		{"9600bit", 9600, "9.6kbit"},
		{"1234567bit", 1234567, "1234.567kbit"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRate(tt.in)
			if err != nil || got != tt.want || got.String() != tt.str {
				t.Fatalf("ParseRate(%q) = %d %q, %v; want %d %q", tt.in, got, got.String(), err, tt.want, tt.str)
			}
		})
	}
	for _, bad := range []string{"", "0mbit", "-1mbit", "3", "3mbps", "NaNmbit", "2000gbit"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q): no error", bad)
		}
	}
}

func TestBDP(t *testing.T) {
	// RFC 6349 section 2: BDP = RTT x BB / 8. 3 Mbit/s x 50 ms = 18750 bytes.
	if got := BDP(3*Mbit, 50*time.Millisecond); got != 18750 {
		t.Fatalf("BDP = %d, want 18750", got)
	}
	if got := (3 * Mbit).Transmit(1500); got != 4*time.Millisecond {
		t.Fatalf("Transmit(1500B) at 3mbit = %v, want 4ms", got)
	}
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Spec
	}{
		{"carlucci", "carlucci2015", Spec{Down: 3 * Mbit, Up: 3 * Mbit, RTT: 50 * time.Millisecond, QueueBytes: 18750, QueueBDP: 1, MTU: 1500, Shaper: "emu"}},
		{"none", "none", Spec{MTU: 1500, Shaper: "none"}},
		{"items", "rate=3mbit,rtt=50ms,queue=25pkt,loss=1%", Spec{Down: 3 * Mbit, Up: 3 * Mbit, RTT: 50 * time.Millisecond, QueuePackets: 25, Loss: 0.01, MTU: 1500, Shaper: "emu", DownImp: Impair{Loss: 0.01}, UpImp: Impair{Loss: 0.01}}},
		{"bytes", "rate=3mbit,rtt=50ms,queue=18750B", Spec{Down: 3 * Mbit, Up: 3 * Mbit, RTT: 50 * time.Millisecond, QueueBytes: 18750, MTU: 1500, Shaper: "emu"}},
		{"asym", "down=5mbit,up=1mbit,rtt=28ms", Spec{Down: 5 * Mbit, Up: Mbit, RTT: 28 * time.Millisecond, QueueBytes: 17500, QueueBDP: 1, MTU: 1500, Shaper: "emu"}},
		{"default queue floor", "rate=1mbit,rtt=1ms", Spec{Down: Mbit, Up: Mbit, RTT: time.Millisecond, QueueBytes: 6000, QueueBDP: 1, QueueFloored: true, MTU: 1500, Shaper: "emu"}},
		{"override", "carlucci2015,loss=0.5%,jitter=2ms,reorder=true,mtu=1400,seed=7", Spec{Down: 3 * Mbit, Up: 3 * Mbit, RTT: 50 * time.Millisecond, QueueBytes: 18750, QueueBDP: 1, Loss: 0.005, Jitter: 2 * time.Millisecond, Reorder: true, MTU: 1400, Shaper: "emu", Seed: 7, DownImp: Impair{Loss: 0.005}, UpImp: Impair{Loss: 0.005}}},
		{"delay only", "rtt=50ms", Spec{RTT: 50 * time.Millisecond, QueueBDP: 1, MTU: 1500, Shaper: "emu"}},
		{"netem", "rate=10mbit,rtt=20ms,shaper=netem", Spec{Down: 10 * Mbit, Up: 10 * Mbit, RTT: 20 * time.Millisecond, QueueBytes: 25000, QueueBDP: 1, MTU: 1500, Shaper: "netem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Input = tt.in
			if got != tt.want {
				t.Fatalf("Parse(%q) =\n%+v, want\n%+v", tt.in, got, tt.want)
			}
			again, err := Parse(got.String())
			if err != nil || again.Down != got.Down || again.Up != got.Up || again.RTT != got.RTT || again.QueueBytes != got.QueueBytes ||
				again.UpQueueBytes() != got.UpQueueBytes() || again.QueuePackets != got.QueuePackets || again.Loss != got.Loss {
				t.Fatalf("round trip %q: %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"", "preset"},
		{"rate=0mbit", "rate"},
		{"rate=-3mbit", "rate"},
		{"rtt=-5ms", "rtt"},
		{"loss=101%", "loss"},
		{"loss=-1%", "loss"},
		{"loss=0.5", "loss"},
		{"rate=3mbit,queue=0", "queue"},
		{"rate=3mbit,queue=0pkt", "queue"},
		{"rate=3mbit,rtt=1ms,queue=1bdp", "queue"},
		{"rate=3mbit,queue=100B", "queue"},
		{"mtu=1000", "mtu"},
		{"mtu=9001", "mtu"},
		{"colour=blue", "colour"},
		{"nosuchpreset", "nosuchpreset"},
		{"rate=3mbit,carlucci2015", "carlucci2015"},
		{"shaper=tc", "shaper"},
		{"reorder=maybe", "reorder"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q): no error", tt.in)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.mention) || !strings.Contains(msg, "accepted") || strings.Contains(msg, "\n") {
				t.Fatalf("Parse(%q) error %q: want one line naming %q and what is accepted", tt.in, msg, tt.mention)
			}
		})
	}
}

func TestPresetsParse(t *testing.T) {
	for _, p := range Presets() {
		s, err := Parse(p.Name)
		if err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
			continue
		}
		if p.Doc == "" || (p.Name != "none" && (s.Down <= 0 || s.Up <= 0 || s.QueueBytes <= 0)) {
			t.Errorf("preset %s: incomplete %+v", p.Name, s)
		}
	}
}

func TestResult(t *testing.T) {
	s, _ := Parse("carlucci2015")
	r := s.Result()
	if r.DownBps != 3e6 || r.UpBps != 3e6 || r.RTTMs != 50 || r.QueueBytes != 18750 || r.Shaper != "emu" || r.Spec != "carlucci2015" || r.MTU != 1500 {
		t.Fatalf("Result() = %+v", r)
	}
}

func TestUpQueueBytes(t *testing.T) {
	s, _ := Parse("down=5mbit,up=1mbit,rtt=100ms")
	if s.QueueBytes != 62500 || s.UpQueueBytes() != 12500 {
		t.Fatalf("queues %d/%d, want 62500/12500", s.QueueBytes, s.UpQueueBytes())
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"carlucci2015", "rate=3mbit,rtt=50ms,queue=1bdp", "down=1.5mbit,up=384kbit,loss=1%", "queue=25pkt", "3g,jitter=5ms,reorder=true", "mtu=9000,shaper=netem",
		"rate=10mbit,rtt=112ms,delayvar=50ms", "rate=3mbit,rtt=50ms,loss=2%,burst=4", "rate=10mbit,rtt=30ms,outage=5s/2s", "rate=5mbit,rtt=40ms,aqm=codel,ecn=true",
		"rate=5mbit,rtt=40ms,down.aqm=pie,up.loss=gemodel:1%/30%/100%/0%", "rate=1mbit,rtt=20ms,reorder=5%,reorder_delay=3ms,outage=exp:1s/100ms,outage_mode=hold",
		"rate=1mbit,rtt=20ms,jitter=2ms,reorder=true,down.reorder=5%,up.reorder=5%", "rate=10mbit,rtt=30ms,rebind=addr@1s/5s",
		"rate=10mbit,rtt=30ms,bleach=ecn,up.bleach=none", "rate=10mbit,rtt=30ms,up.bleach=ecn,down.aqm=codel,down.ecn=true"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q", in)
			}
			return
		}
		if s.Loss < 0 || s.Loss > 1 || s.RTT < 0 || s.MTU < MinMTU || s.MTU > MaxMTU || s.Down < 0 || s.Up < 0 {
			t.Fatalf("Parse(%q) accepted bad values: %+v", in, s)
		}
		if s.Shaped() {
			again, err := Parse(s.String())
			if err != nil {
				t.Fatalf("canonical form %q of %q does not parse: %v", s.String(), in, err)
			}
			if again.QueueBytes != s.QueueBytes || again.UpQueueBytes() != s.UpQueueBytes() || again.Down != s.Down || again.Up != s.Up || again.Rebind != s.Rebind {
				t.Fatalf("canonical form %q of %q changes the queues or rates: %+v vs %+v", s.String(), in, again, s)
			}
			again.Input, again.QueueBDP = s.Input, s.QueueBDP // a floored default BDP queue prints as bytes
			if again != s {
				t.Fatalf("canonical form %q of %q changes the spec: %+v vs %+v", s.String(), in, again, s)
			}
		}
	})
}

func TestPipeConfigs(t *testing.T) {
	s, _ := Parse("down=5mbit,up=1mbit,rtt=100ms,loss=1%,jitter=2ms,seed=9")
	down, up, err := PipeConfigs(s)
	if err != nil {
		t.Fatal(err)
	}
	if down.Rate != 5e6 || up.Rate != 1e6 || down.Delay != 50*time.Millisecond || up.Delay != 50*time.Millisecond {
		t.Fatalf("rates/delays: %+v %+v", down, up)
	}
	if down.QueueBytes != 62500 || up.QueueBytes != 12500 || down.Loss != 0.01 || up.Jitter != 2*time.Millisecond {
		t.Fatalf("queues/loss/jitter: %+v %+v", down, up)
	}
	if down.Seed == up.Seed {
		t.Fatal("both directions share a seed: their losses would be correlated")
	}
}

func TestParseSpecRepeatsAndNone(t *testing.T) {
	tests := []struct{ in, want string }{
		{"rate=3mbit,rate=5mbit", `link key "rate" given twice in "rate=3mbit,rate=5mbit": accepted each key once`},
		{"rate=3mbit,down=5mbit", `link "rate=3mbit,down=5mbit" sets rate and down: accepted rate (both directions) or down/up, not both`},
		{"up=1mbit,rate=5mbit", `link "up=1mbit,rate=5mbit" sets rate and down/up: accepted rate (both directions) or down/up, not both`},
		{"none,rate=1mbit", `link "none,rate=1mbit" shapes nothing (none) but sets rate: accepted none alone, or shaping keys with shaper=emu or netem`},
		{"rate=3mbit,shaper=none", `link "rate=3mbit,shaper=none" shapes nothing (none) but sets rate: accepted none alone, or shaping keys with shaper=emu or netem`},
		{"rate=1bit", `rate "1bit" out of range: accepted 8kbit..1000gbit`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
	// A preset's own keys may still be overridden once.
	sp, err := Parse("carlucci2015,rate=10mbit")
	if err != nil || sp.Down != 10*Mbit || sp.Up != 10*Mbit {
		t.Fatalf("override: %+v, %v", sp, err)
	}
}

// TestDefaultQueueFloor checks the default queue's floor: 1 ms at the rate on a fast short
// link (rtt=0 would otherwise get a 4-packet queue that every TSO burst overflows), the
// 4-packet floor at low rates, no floor for an explicit queue, and the record's flag.
func TestDefaultQueueFloor(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    ByteSize
		floored bool
	}{
		{"rate=1gbit,rtt=0ms", 125000, true},
		{"rate=10gbit,rtt=0ms", 1250000, true},
		{"rate=1gbit,rtt=50ms", 6250000, false},
		{"rate=3mbit,rtt=50ms", 18750, false},
		{"rate=3mbit,rtt=1ms", 6000, true},
		{"rate=1gbit,rtt=0ms,queue=1bdp", 0, false}, // explicit: refused below, never raised
		{"rate=1gbit,rtt=0ms,queue=6000B", 6000, false},
	} {
		s, err := Parse(c.in)
		if c.want == 0 {
			if err == nil {
				t.Errorf("%s: accepted an explicit 1-BDP queue of 0 bytes", c.in)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if s.QueueBytes != c.want || s.QueueFloored != c.floored || s.Result().QueueFloored != c.floored {
			t.Errorf("%s: queue %d B floored %v, want %d B floored %v", c.in, s.QueueBytes, s.QueueFloored, c.want, c.floored)
		}
		if s.UpQueueBytes() != c.want {
			t.Errorf("%s: up queue %d B, want %d", c.in, s.UpQueueBytes(), c.want)
		}
	}
}

// TestPartialNote: down= alone says that up is unlimited and rtt is 0; a full spec, a preset
// and an unshaped link say nothing.
func TestPartialNote(t *testing.T) {
	for _, tc := range []struct{ link, want string }{
		{"down=5mbit", `link "down=5mbit": up is unlimited (no up= or rate=), rtt is 0 (no rtt=: no added delay); give them if that is not meant`},
		{"up=1mbit,rtt=20ms", `link "up=1mbit,rtt=20ms": down is unlimited (no down= or rate=); give them if that is not meant`},
		{"rate=3mbit", `link "rate=3mbit": rtt is 0 (no rtt=: no added delay); give them if that is not meant`},
		{"rate=3mbit,rtt=50ms", ""},
		{"carlucci2015", ""},
		{"none", ""},
		{"rate=nonsense", ""},
	} {
		if got := PartialNote(tc.link); got != tc.want {
			t.Errorf("PartialNote(%q) = %q, want %q", tc.link, got, tc.want)
		}
	}
}
