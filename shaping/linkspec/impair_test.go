package linkspec

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

// writeTraces writes lte.trace (24 Mbit/s nominal steps) and lte-up.trace in dir and returns
// to it for the test (Parse reads trace paths relative to the working directory).
func writeTraces(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for name, shape := range map[string]string{"lte.trace": "steps:20mbit/500ms,4mbit/500ms", "lte-up.trace": "2mbit"} {
		ms, err := GenerateTrace(shape)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		WriteTrace(&b, ms)
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
}

func TestIssueSpellings(t *testing.T) {
	writeTraces(t)
	ms := time.Millisecond
	tests := []struct {
		in    string
		check func(Spec) bool
		canon string
	}{
		{"rate=10mbit,rtt=30ms,corrupt=2%", func(s Spec) bool {
			return s.DownImp.Corrupt == 0.02 && s.UpImp.Corrupt == 0.02 && s.Result().Down.Corrupt == 0.02
		}, "rate=10mbit,rtt=30ms,corrupt=2%,queue=1bdp,shaper=emu"},
		{"rate=10mbit,rtt=30ms,down.corrupt=30%", func(s Spec) bool {
			down, up, err := PipeConfigs(s)
			return err == nil && s.DownImp.Corrupt == 0.3 && s.UpImp.Corrupt == 0 && down.Corrupt == 0.3 && up.Corrupt == 0
		}, "rate=10mbit,rtt=30ms,down.corrupt=30%,queue=1bdp,shaper=emu"},
		{"rate=10mbit,rtt=30ms,bleach=ecn", func(s Spec) bool {
			down, up, err := PipeConfigs(s)
			r := s.Result()
			return err == nil && s.DownImp.BleachECN && s.UpImp.BleachECN && down.BleachECN && up.BleachECN && r.Down.BleachECN && r.Up.BleachECN
		}, "rate=10mbit,rtt=30ms,bleach=ecn,queue=1bdp,shaper=emu"},
		{"rate=10mbit,rtt=30ms,bleach=ECN,up.bleach=none", func(s Spec) bool {
			down, up, err := PipeConfigs(s)
			r := s.Result()
			return err == nil && s.DownImp.BleachECN && !s.UpImp.BleachECN && down.BleachECN && !up.BleachECN && r.Down.BleachECN && !r.Up.BleachECN
		}, "rate=10mbit,rtt=30ms,down.bleach=ecn,queue=1bdp,shaper=emu"},
		{"rate=10mbit,rtt=30ms,up.bleach=ecn,down.aqm=codel,down.ecn=true", func(s Spec) bool {
			down, up, err := PipeConfigs(s)
			return err == nil && !down.BleachECN && up.BleachECN && down.ECN && !up.ECN
		}, "rate=10mbit,rtt=30ms,down.aqm=codel,down.ecn=true,up.bleach=ecn,queue=1000pkt,shaper=emu"},
		{"rate=10mbit,rtt=30ms,bleach=none", func(s Spec) bool {
			return !s.DownImp.BleachECN && !s.UpImp.BleachECN
		}, "rate=10mbit,rtt=30ms,queue=1bdp,shaper=emu"},
		{"rate=10mbit,rtt=30ms,queue=25pkt,rebind=port", func(s Spec) bool {
			r := s.Result()
			return s.Rebind == emu.Rebind{Mode: emu.RebindPort, First: time.Second, Every: 5 * time.Second} && r.Rebind == "port" && r.RebindFirstMs == 1000 && r.RebindEveryMs == 5000
		}, "rate=10mbit,rtt=30ms,queue=25pkt,rebind=port@1s/5s,shaper=emu"},
		{"rate=10mbit,rtt=30ms,rebind=ADDR@250ms/0s", func(s Spec) bool {
			return s.Rebind == emu.Rebind{Mode: emu.RebindAddr, First: 250 * ms}
		}, "rate=10mbit,rtt=30ms,queue=1bdp,rebind=addr@250ms/0s,shaper=emu"},
		{"rate=10mbit,rtt=30ms,rebind=addr@2s", func(s Spec) bool {
			return s.Rebind == emu.Rebind{Mode: emu.RebindAddr, First: 2 * time.Second, Every: 5 * time.Second}
		}, "rate=10mbit,rtt=30ms,queue=1bdp,rebind=addr@2s/5s,shaper=emu"},
		{"rate=10mbit,rtt=112ms,delayvar=50ms", func(s Spec) bool {
			return s.DownImp.DelayVar == 50*ms && s.UpImp.DelayVar == 50*ms && s.RTT == 112*ms
		}, "rate=10mbit,rtt=112ms,delayvar=50ms,queue=1bdp,shaper=emu"},
		{"rate=3mbit,rtt=50ms,loss=2%,burst=4", func(s Spec) bool {
			return s.Loss == 0.02 && s.DownImp.Burst == 4 && s.UpImp == s.DownImp
		}, "rate=3mbit,rtt=50ms,loss=2%,burst=4,queue=1bdp,shaper=emu"},
		{"down=trace:lte.trace,up=trace:lte-up.trace,rtt=40ms,aqm=codel", func(s Spec) bool {
			// lte.trace: 831 + 166 opportunities per 1000 ms; lte-up: 166.
			return s.DownImp.Trace == "lte.trace" && s.UpImp.Trace == "lte-up.trace" && s.DownImp.AQM == emu.CoDel &&
				s.Down == Rate(997*12032) && s.Up == Rate(166*12032) && s.QueuePackets == 1000 && s.QueueBytes == 0
		}, "down=trace:lte.trace,up=trace:lte-up.trace,rtt=40ms,aqm=codel,queue=1000pkt,shaper=emu"},
		{"rate=10mbit,rtt=30ms,outage=5s/2s", func(s Spec) bool {
			return s.Outage == emu.Outage{On: 5 * time.Second, Off: 2 * time.Second}
		}, "rate=10mbit,rtt=30ms,queue=1bdp,outage=5s/2s,shaper=emu"},
		{"rate=5mbit,rtt=40ms,down.aqm=fq_codel,down.ecn=true,up.loss=gemodel:1%/30%/100%/0%,outage=exp:1s/100ms,outage_mode=hold", func(s Spec) bool {
			return s.DownImp.AQM == emu.FQCoDel && s.DownImp.ECN && s.UpImp.GE == emu.GilbertElliott{P: 0.01, R: 0.3, H1: 1} &&
				s.Outage.Random && s.Outage.Hold && s.QueuePackets == 10240
		}, "rate=5mbit,rtt=40ms,down.aqm=fq_codel,down.ecn=true,up.loss=gemodel:1%/30%/100%/0%,queue=10240pkt,outage=exp:1s/100ms,outage_mode=hold,shaper=emu"},
		{"rate=5mbit,rtt=40ms,reorder=1%,reorder_delay=5ms,delayvar=10ms,delayvar_every=50ms,aqm=pie,target=20ms", func(s Spec) bool {
			return s.UpImp.ReorderProb == 0.01 && s.UpImp.ReorderDelay == 5*ms && s.UpImp.DelayVarEvery == 50*ms && s.DownImp.AQM == emu.PIE && s.DownImp.Target == 20*ms
		}, "rate=5mbit,rtt=40ms,delayvar=10ms,delayvar_every=50ms,reorder=1%,reorder_delay=5ms,aqm=pie,target=20ms,queue=1000pkt,shaper=emu"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s) {
				t.Fatalf("Parse(%q) = %+v", tt.in, s)
			}
			if s.String() != tt.canon {
				t.Fatalf("String() = %s, want %s", s.String(), tt.canon)
			}
			if _, _, err := PipeConfigs(s); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestImpairErrors(t *testing.T) {
	writeTraces(t)
	tests := []struct{ in, want string }{
		{"rate=1mbit,rtt=20ms,jitter=50ms", "jitter 50ms exceeds the one-way delay 10ms (rtt/2): accepted jitter <= rtt/2, so no delay falls below 0"},
		{"rate=1mbit,rtt=20ms,delayvar=11ms", "down: delayvar 11ms exceeds the one-way delay 10ms (rtt/2): accepted delayvar <= rtt/2, so no delay falls below 0"},
		{"rate=1mbit,rtt=20ms,burst=3", "down: burst=3 without loss: accepted burst=N together with loss=P%"},
		{"rate=1mbit,loss=60%,burst=1", "down: loss=60%,burst=1: mean loss 60% with mean bursts of 1 packets needs p = 1.5 > 1: accepted loss <= burst/(burst+1)"},
		{"rate=1mbit,burst=0.5", `bad burst "0.5": accepted a mean loss-burst length in packets, 1..1000000, with loss=P%`},
		{"rate=1mbit,loss=gemodel:1%", `bad loss "gemodel:1%": accepted gemodel:p/r[/1-h[/1-k]] in percent, e.g. gemodel:1%/30%/100%/0% (tc-netem's gemodel)`},
		{"rate=1mbit,corrupt=2", `bad corrupt "2": accepted a percentage in [0%,100%] such as 2% (the share of packets with a UDP or TCP payload that get one payload bit flipped)`},
		{"rate=1mbit,up.corrupt=101%", `bad corrupt "101%": accepted a percentage in [0%,100%] such as 2% (the share of packets with a UDP or TCP payload that get one payload bit flipped)`},
		{"rate=10mbit,rtt=30ms,corrupt=2%,shaper=netem", "down.corrupt=2% (netem's corrupt flips a bit anywhere in the packet and leaves the checksums, so most corrupted packets die in the receiver's checksum check as loss; the emulator flips a payload bit and fixes the transport checksum): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"rate=1mbit,bleach=true", `bad bleach "true": accepted ecn (clear the IP ECN field of every packet delivered) or none`},
		{"rate=1mbit,up.bleach=dscp", `bad bleach "dscp": accepted ecn (clear the IP ECN field of every packet delivered) or none`},
		{"rate=1mbit,bleach=", `bad bleach "": accepted ecn (clear the IP ECN field of every packet delivered) or none`},
		{"rate=1mbit,aqm=codel,ecn=true,bleach=ecn", "down: ecn=true with bleach=ecn: accepted one of them per direction (the bleaching clears at delivery every CE mark the AQM sets)"},
		{"rate=10mbit,rtt=30ms,up.bleach=ecn,shaper=netem", "up.bleach=ecn (clearing the IP ECN field is the emulator's): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"none,bleach=ecn", `link "none,bleach=ecn" shapes nothing (none) but sets bleach: accepted none alone, or shaping keys with shaper=emu or netem`},
		{"rate=1mbit,rebind=nat", `bad rebind "nat": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=port@", `bad rebind "port@": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=port@0s", `bad rebind "port@0s": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=port@1s/5", `bad rebind "port@1s/5": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=addr@1s/2h", `bad rebind "addr@1s/2h": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=port@1s/5s/1s", `bad rebind "port@1s/5s/1s": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=", `bad rebind "": accepted port or addr, optionally @FIRST/EVERY (durations in 1ms..1h; EVERY 0s rebinds once), e.g. rebind=port@1s/5s (the QUIC Interop Runner's)`},
		{"rate=1mbit,rebind=port,shaper=netem", "rebind=port (a NAT that rewrites the client's datagrams is the emulator's): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"none,rebind=port", `link "none,rebind=port" shapes nothing (none) but sets rebind: accepted none alone, or shaping keys with shaper=emu or netem`},
		{"rate=1mbit,aqm=red", `bad aqm "red": accepted droptail, drophead, codel, pie, fq_codel or cake (cake with shaper=netem)`},
		{"rtt=20ms,aqm=codel", "down: aqm=codel on an unlimited direction: accepted an AQM with a rate or trace (a queue only forms at a bottleneck)"},
		{"rate=1mbit,target=3ms", "down: target, interval or ecn without an AQM: accepted them with aqm=codel, pie or fq_codel"},
		{"rate=1mbit,outage=5s", `bad outage "5s": accepted ON/OFF durations (up ON, then down OFF, repeating), e.g. 5s/2s, or exp:ON/OFF for exponential durations with those means`},
		{"rate=1mbit,outage_mode=hold", "outage_mode=hold without outage: accepted outage_mode together with outage=ON/OFF"},
		{"rate=1mbit,outage=1s/1s,outage_mode=later", `bad outage_mode "later": accepted drop or hold`},
		{"rate=1mbit,reorder=maybe", `bad reorder "maybe": accepted a percentage such as 5% (hold packets back), or true/false (let jitter reorder)`},
		{"rate=1mbit,down.reorder=true", `bad down.reorder "true": accepted a percentage (reorder=true, for jitter, applies to both directions)`},
		{"rate=1mbit,down.mtu=1400", `unknown link key "down.mtu": accepted ` + acceptedKeys},
		{"down=trace:nosuch.trace", `bad down "trace:nosuch.trace": cannot read nosuch.trace (no such file or directory): accepted trace:FILE naming a readable Mahimahi trace file`},
		{"rate=1mbit,rtt=20ms,delayvar=5ms,shaper=netem", "down.delayvar (a delay redrawn every interval): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"carlucci2015,aqm=codel,shaper=netem", "down.aqm=codel with queue=18750B (the kernel's codel limits packets, not bytes; accepted queue=Npkt or no queue): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"rate=1mbit,aqm=drophead,shaper=netem", "down.aqm=drophead with queue=6000B (the kernel's drophead limits packets, not bytes; accepted queue=Npkt or no queue): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"down=trace:lte.trace,shaper=netem", "down=trace:lte.trace (delivery opportunities): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"rate=1mbit,outage=1s/1s,shaper=netem", "outage: shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"rate=1mbit,rtt=10ms,reorder=5%,shaper=netem", "down.reorder=5% with rtt>0 (netem reorders by sending packets undelayed, not by holding them back): shaper=netem cannot emulate it: accepted shaper=emu (the default)"},
		{"none,outage=1s/1s", `link "none,outage=1s/1s" shapes nothing (none) but sets outage: accepted none alone, or shaping keys with shaper=emu or netem`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestImpairResultAndConfigs(t *testing.T) {
	s, err := Parse("rate=3mbit,rtt=50ms,loss=2%,burst=4,down.aqm=codel,up.delayvar=10ms,reorder=1%,outage=5s/2s,outage_mode=hold")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Result()
	if r.Loss != 0.02 || r.Down.LossBurst != 4 || r.Down.AQM != "codel" || r.Down.AQMTargetMs != 5 || r.Down.AQMIntervalMs != 100 ||
		r.Up.DelayVarMs != 10 || r.Up.DelayVarEveryMs != 100 || r.Up.ReorderProb != 0.01 || r.Up.ReorderDelayMs != 10 ||
		r.OutageOnMs != 5000 || r.OutageOffMs != 2000 || r.OutageMode != "hold" || r.Down.DelayVarMs != 0 {
		t.Fatalf("Result() = %+v", r)
	}
	down, up, err := PipeConfigs(s)
	if err != nil {
		t.Fatal(err)
	}
	ge, _ := emu.Simple(0.02, 4)
	if down.GE != ge || down.Loss != 0 || down.AQM != emu.CoDel || up.AQM != emu.DropTail || up.DelayVar != 10*time.Millisecond ||
		down.DelayVar != 0 || up.ReorderDelay != DefaultReorderDelay || down.Outage != up.Outage || !down.Outage.Hold || down.Outage.Seed != 1 {
		t.Fatalf("configs\n%+v\n%+v", down, up)
	}
	// A link with none of the new keys keeps today's emulator configuration exactly.
	c, _ := Parse("carlucci2015")
	down, up, _ = PipeConfigs(c)
	want := emu.Config{Rate: 3e6, Delay: 25 * time.Millisecond, QueueBytes: 18750, Seed: 1}
	if !reflect.DeepEqual(down, want) {
		t.Fatalf("carlucci2015 down config %+v, want %+v", down, want)
	}
	want.Seed = 2
	if !reflect.DeepEqual(up, want) {
		t.Fatalf("carlucci2015 up config %+v, want %+v", up, want)
	}
}

func TestGenerateTrace(t *testing.T) {
	tests := []struct {
		shape string
		n     int
		last  int64
		mean  float64
	}{
		{"12.032mbit", 1000, 1000, 12.032e6},
		{"3mbit", 249, 1000, 249 * 12032},
		{"steps:12.032mbit/10ms,1.2032mbit/10ms", 11, 20, 11 * 12032 / 0.02},
		{"onoff:12.032mbit/10ms/30ms", 10, 40, 10 * 12032 / 0.04},
	}
	for _, tt := range tests {
		ms, err := GenerateTrace(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := emu.NewTrace(ms)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != tt.n || ms[len(ms)-1] != tt.last || (tr.MeanRate()-tt.mean)/tt.mean > 1e-9 || (tt.mean-tr.MeanRate())/tt.mean > 1e-9 {
			t.Errorf("%s: %d lines, last %d, mean %v; want %d, %d, %v", tt.shape, len(ms), ms[len(ms)-1], tr.MeanRate(), tt.n, tt.last, tt.mean)
		}
	}
	for _, bad := range []string{"fast", "steps:1mbit", "onoff:1mbit/1s", "steps:", "wave:1mbit"} {
		if _, err := GenerateTrace(bad); err == nil || !strings.Contains(err.Error(), "accepted") {
			t.Errorf("GenerateTrace(%q): %v", bad, err)
		}
	}
}

// TestTraceErrorOneClause: a bad trace is named once with its bad line number and what is
// accepted, never the line's content, and the message says "accepted" once (not as if the
// input had been accepted).
func TestTraceErrorOneClause(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ body, want string }{
		{"10\nten\n", `trace line 2 is not a whole number of milliseconds in 0..86400000: accepted one such number per line`},
		// a file that is not a trace: its content is never echoed (on 3e73eb5 the first line was)
		{"root:$6$secret\x1b[2J:19000:0\n", `trace line 1 is not a whole number of milliseconds in 0..86400000: accepted one such number per line`},
		{"10\n5\n", "trace line 2 holds 5 ms, before the previous line's 10 ms: accepted non-decreasing times"},
		{"0\n", "trace has no opportunity after 0 ms: accepted at least one line with a time above 0"},
	} {
		path := filepath.Join(dir, "t.trace")
		if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Parse("down=trace:" + path + ",rtt=10ms")
		want := fmt.Sprintf(`bad down "trace:%s": %s: %s`, path, path, tt.want)
		if err == nil || err.Error() != want {
			t.Fatalf("trace %q: err = %v\nwant %s", tt.body, err, want)
		}
		if n := strings.Count(err.Error(), "accepted"); n != 1 {
			t.Fatalf("trace %q: %q says accepted %d times", tt.body, err, n)
		}
	}
}

// TestCAKEAndJitterDistSpecs: aqm=cake parses for shaper=netem (no queue: CAKE's own limit) and
// is refused in one line naming it and what is accepted with the emulator, with a queue and
// with CoDel's parameters; jitter_dist round-trips, is recorded, reaches the emulator's
// configuration, and is refused without jitter or with an unknown name.
func TestCAKEAndJitterDistSpecs(t *testing.T) {
	s, err := Parse("rate=3mbit,rtt=50ms,aqm=cake,shaper=netem")
	if err != nil {
		t.Fatal(err)
	}
	if s.DownImp.AQM != emu.CAKE || s.QueueBytes != 0 || s.QueuePackets != 0 || s.String() != "rate=3mbit,rtt=50ms,aqm=cake,shaper=netem" {
		t.Errorf("cake: %+v, String %q", s, s.String())
	}
	if r := s.Result(); r.Down.AQM != "cake" {
		t.Errorf("record aqm %q", r.Down.AQM)
	}
	for spec, want := range map[string]string{
		"rate=3mbit,rtt=50ms,aqm=cake":                               "aqm=cake (CAKE: COBALT with set-associative flow queueing) with shaper=emu: the userspace emulator has no CAKE: accepted aqm=cake with shaper=netem, or aqm=droptail, drophead, codel, pie or fq_codel",
		"rate=3mbit,rtt=50ms,aqm=cake,shaper=emu,queue=100pkt":       "aqm=cake with queue: accepted aqm=cake without queue (CAKE limits the memory its packets occupy, not their bytes or number)",
		"rate=3mbit,rtt=50ms,aqm=cake,target=10ms,shaper=netem":      "down: target, interval or ecn with aqm=cake: accepted aqm=cake alone (CAKE's COBALT keeps its own 5 ms target and 100 ms interval and always marks ECN-capable packets)",
		"rate=3mbit,rtt=50ms,aqm=kake,shaper=netem":                  `bad aqm "kake": accepted droptail, drophead, codel, pie, fq_codel or cake (cake with shaper=netem)`,
		"rate=3mbit,rtt=50ms,jitter_dist=normal":                     "jitter_dist=normal without jitter: accepted jitter_dist together with jitter=D",
		"rate=3mbit,rtt=50ms,jitter=5ms,jitter_dist=gauss":           `bad jitter_dist "gauss": accepted uniform, normal, pareto or paretonormal`,
		"rate=3mbit,rtt=50ms,jitter=5ms,jitter_dist=pareto,aqm=cake": "aqm=cake (CAKE: COBALT with set-associative flow queueing) with shaper=emu: the userspace emulator has no CAKE: accepted aqm=cake with shaper=netem, or aqm=droptail, drophead, codel, pie or fq_codel",
	} {
		if _, err := Parse(spec); err == nil || err.Error() != want {
			t.Errorf("%s: error %v\nwant %s", spec, err, want)
		}
	}
	s, err = Parse("rate=3mbit,rtt=50ms,jitter=5ms,jitter_dist=paretonormal")
	if err != nil {
		t.Fatal(err)
	}
	if s.JitterDist != emu.JitterParetoNormal || s.String() != "rate=3mbit,rtt=50ms,queue=1bdp,jitter=5ms,jitter_dist=paretonormal,shaper=emu" || s.Result().JitterDist != "paretonormal" {
		t.Errorf("jitter_dist: %v, String %q, record %q", s.JitterDist, s.String(), s.Result().JitterDist)
	}
	if again, err := Parse(s.String()); err != nil || again.JitterDist != s.JitterDist {
		t.Errorf("round trip: %v %v", again.JitterDist, err)
	}
	down, up, err := PipeConfigs(s)
	if err != nil || down.JitterDist != emu.JitterParetoNormal || up.JitterDist != emu.JitterParetoNormal {
		t.Errorf("PipeConfigs: %v %v %v", down.JitterDist, up.JitterDist, err)
	}
}
