package main

import (
	"encoding/json"
	"github.com/pltlab/pltlab/internal/testenv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/studies"
)

// smokeStudy runs `reproduce STUDY --scale smoke` and checks what every study report must have:
// exit 0, the report files, a report that opens with the findings table, one judgement per
// finding with a known verdict, every planned load made and every load valid. It returns the
// printed output, the output directory and the records. Every link is self-checked, as a user's
// run is: a study measured through an unchecked link is not a result, so the test asserts one
// passing link_check line (the last of at most result.Attempts) per link and part.
// A link check that fails on a busy machine fails this test, with the check's lines in the
// output: it must not be switched off to make the test pass.
func smokeStudy(t *testing.T, name string, extra ...string) (out, dir string, recs []*result.Record) {
	t.Helper()
	needRootAndChromium(t)
	dir = filepath.Join(t.TempDir(), "out")
	args := append([]string{"reproduce", name, "--scale", "smoke", "--out", dir}, extra...)
	code, out, errOut := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, f := range append(slices.Clone(studies.ReportFiles), "results.jsonl") {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if i := strings.Index(string(md), "\n## "); i < 0 || !strings.HasPrefix(string(md)[i:], "\n## Findings") {
		t.Errorf("report.md does not open with the findings table:\n%.800s", md)
	}
	for _, s := range []string{"## Scale: what was run and what was scaled down", "## What differs from the published testbed", "(recorded)"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
	st, err := studies.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(extra, "--calibrate") {
		st = studies.CarlucciCalibration()
	}
	var fj struct {
		Study    string `json:"study"`
		Scale    string `json:"scale"`
		Findings []struct {
			ID, Verdict, Evidence string
		} `json:"findings"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "findings.json"))
	if err := json.Unmarshal(b, &fj); err != nil {
		t.Fatalf("findings.json: %v", err)
	}
	if fj.Study != name || fj.Scale != "smoke" || len(fj.Findings) != len(st.Findings) {
		t.Errorf("findings.json: study %q scale %q, %d findings, want %s smoke %d", fj.Study, fj.Scale, len(fj.Findings), name, len(st.Findings))
	}
	for _, f := range fj.Findings {
		if !slices.Contains(studies.Verdicts, studies.Verdict(f.Verdict)) || f.Evidence == "" {
			t.Errorf("finding %s: verdict %q evidence %q", f.ID, f.Verdict, f.Evidence)
		}
	}
	recs = readAll(t, filepath.Join(dir, "results.jsonl"))
	plan := st.Plan(studies.Smoke)
	perPart := map[string]int{}
	var lost testenv.Lost
	loads := 0
	for _, r := range recs {
		if !r.IsLoad() {
			continue
		}
		perPart[r.Experiment]++
		loads++
		if lost.Excused(t, r) {
			continue
		}
		if !r.Valid || r.ObservedProtocol != r.Protocol || r.TimedOut {
			t.Errorf("%s run %d (%s %s, %s, %s): valid=%v observed=%q timed out=%v reason=%q", r.Experiment, r.Run, r.Protocol, r.Mode,
				r.Page.Spec, r.Link.Spec, r.Valid, r.ObservedProtocol, r.TimedOut, r.InvalidReason)
		}
		if r.Protocol == "h3" && r.Mode == result.Warm && !r.Warmup && !r.Used0RTT {
			t.Errorf("%s run %d: warm h3 load did not use 0-RTT", r.Experiment, r.Run)
		}
		if r.Emulator == nil || r.Emulator.Down.PacketsOut == 0 {
			t.Errorf("%s run %d: emulator counters %+v", r.Experiment, r.Run, r.Emulator)
		}
	}
	lost.Check(t, loads)
	for i, c := range plan.Configs(studies.RunOptions{}) {
		if want := len(scheduleOf(c)); perPart[c.Name] != want {
			t.Errorf("part %s: %d loads, want %d", plan.Parts[i].Name, perPart[c.Name], want)
		}
		for _, l := range c.Links {
			var checks []*result.Record
			for _, r := range recs {
				if r.Kind == result.KindLinkCheck && r.Experiment == c.Name && r.Link.Spec == l {
					checks = append(checks, r)
				}
			}
			if len(checks) == 0 || len(checks) > result.Attempts || checks[len(checks)-1].Check == nil || !checks[len(checks)-1].Check.Pass {
				t.Errorf("part %s link %s: %d link_check lines, the last passing: want 1..%d", plan.Parts[i].Name, l, len(checks), result.Attempts)
			}
		}
	}
	return out, dir, recs
}

func TestIntegrationStudyCarlucciSmoke(t *testing.T) {
	out, _, recs := smokeStudy(t, "carlucci2015")
	for _, r := range recs {
		if !r.IsLoad() {
			continue
		}
		if r.Page.Spec != "carlucci2015" || r.Page.TotalBytes != 300000 || r.Link.DownBps != 3_000_000 || r.Link.RTTMs != 50 {
			t.Errorf("run %d: page %+v link %+v", r.Run, r.Page, r.Link)
		}
		if r.Protocol != "h3" && (r.TLSVersion != "1.2" || r.TCPCC != "cubic") {
			t.Errorf("run %d (%s): tls %q cc %q, want TLS 1.2 and cubic", r.Run, r.Protocol, r.TLSVersion, r.TCPCC)
		}
		// A 3 Mbit/s link cannot carry 300 KB in less than 0.8 s.
		if r.PLTMs < 800 || r.PLTMs > 30000 {
			t.Errorf("run %d: PLT %.1f ms outside 800..30000", r.Run, r.PLTMs)
		}
	}
	// The safe-deployment flows (the flows package is always built): one run of QUIC and TCP
	// CUBIC sharing the link at smoke scale, one valid record per flow. They go through the one
	// flows runner: the link is self-checked first and the records carry the complete env.
	flowLines, flowChecks := 0, 0
	var lostFlows testenv.LostRuns // a run the emulator was late in twice: the harness's outcome
	for _, r := range recs {
		if r.Kind == "link_check" && r.Experiment == "carlucci2015/flows" {
			flowChecks++
		}
		if r.Kind == "flow" && r.Experiment == "carlucci2015/flows" {
			flowLines++
			if !r.Valid && !lostFlows.Excused(t, r) {
				t.Errorf("flow %s invalid: %s", r.Protocol, r.InvalidReason)
			}
			if r.Env == nil || r.Env.Kernel == "" || r.Env.QUIC == "" {
				t.Errorf("flow %s: env %+v lacks the kernel or the QUIC stack", r.Protocol, r.Env)
			}
		}
	}
	// The flows part self-checks its link like every part (smokeStudy runs every check).
	if flowChecks < 1 || flowChecks > result.Attempts {
		t.Errorf("%d link checks of the flows part, want 1..%d", flowChecks, result.Attempts)
	}
	lostFlows.Check(t, 1)
	if flowLines != 2 {
		t.Errorf("%d flow lines, want 2", flowLines)
	}
	for _, s := range []string{"2.03 s", "1.45 s", "1.14 s", "HTTP/1.1", "SPDY", "QUIC", "ideal lower bound", "Findings", "FEC"} {
		if !strings.Contains(out, s) {
			t.Errorf("printed output lacks %q:\n%s", s, out)
		}
	}
}

func TestIntegrationStudyKakhkiSmoke(t *testing.T) {
	_, dir, recs := smokeStudy(t, "kakhki2017")
	for _, f := range []string{"heatmap-per-link.svg", "heatmap-per-link.png", "heatmap-per-page.svg", "heatmap-per-page.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	for _, r := range recs {
		if r.IsLoad() && r.Protocol != "h3" && r.TCPCC != "cubic" {
			t.Errorf("run %d: TCP cc %q, want cubic", r.Run, r.TCPCC)
		}
	}
}

func TestIntegrationStudyMuthurajSmoke(t *testing.T) {
	_, _, recs := smokeStudy(t, "muthuraj2024")
	ccs := map[string]bool{}
	for _, r := range recs {
		if r.IsLoad() && r.Protocol == "h2" {
			ccs[r.TCPCC] = true
		}
	}
	if !ccs["cubic"] || !ccs["bbr"] {
		t.Errorf("TCP congestion controls measured %v, want cubic and bbr", ccs)
	}
}

// TestIntegrationStudyModQUICSmoke runs modquic at smoke scale (two paths, every mix once for
// 3 s, about a minute): a checked link per path, one valid flow line per flow of every mix, the
// QUIC flows served by ngtcp2 with the controller of their spec (read back) and their sender
// counters from its qlog, the TCP flows by pltlab's server.
func TestIntegrationStudyModQUICSmoke(t *testing.T) {
	_, _, recs := smokeStudy(t, "modquic")
	plan, _ := studies.Lookup("modquic")
	p := plan.Plan(studies.Smoke)
	var lostFlows testenv.LostRuns // a run the emulator was late in twice: the harness's outcome
	runs := 0
	for _, fp := range p.Flows {
		runs += len(fp.Mixes)
		name := studies.PartExperiment("modquic", fp.Name)
		got, checked := map[string]int{}, false
		for _, r := range recs {
			if r.Experiment != name {
				continue
			}
			if r.Kind == result.KindLinkCheck && r.Check != nil && r.Check.Pass {
				checked = true
			}
			if !r.IsFlow() {
				continue
			}
			got[r.Mix]++
			if !r.Valid && !lostFlows.Excused(t, r) {
				t.Errorf("%s %s flow %d: invalid: %s", fp.Name, r.Mix, r.FlowIndex, r.InvalidReason)
			}
			if r.Protocol == "h3" && (r.Env == nil || !strings.HasPrefix(r.Env.QUIC, "ngtcp2 ") || r.SegmentsOut <= 0 || r.SRTTMs <= 0) {
				t.Errorf("%s %s flow %d (%s): ngtcp2 not recorded or no sender counters: env %+v, packets %d, srtt %.1f", fp.Name, r.Mix, r.FlowIndex, r.CC, r.Env, r.SegmentsOut, r.SRTTMs)
			}
		}
		if !checked {
			t.Errorf("%s: no passing link check", fp.Name)
		}
		for _, mix := range fp.Mixes {
			if n := got[strings.Join(mix, "+")]; n != len(mix) {
				t.Errorf("%s mix %v: %d flow lines, want %d", fp.Name, mix, n, len(mix))
			}
		}
	}
	lostFlows.Check(t, runs)
}

// scheduleOf is experiment.Order, here so the test reads as the schedule does.
var scheduleOf = experiment.Order

// TestIntegrationStudyHighwaySmoke runs highway2023 at smoke scale (the veth path, one 2 s run
// per arm, about 30 s): one valid flow line per arm with its stack settings, the OS-default
// UDP buffers read back at net.core.rmem_default and the raised ones at least ten times that.
func TestIntegrationStudyHighwaySmoke(t *testing.T) {
	_, _, recs := smokeStudy(t, "highway2023")
	arms := map[string]*result.Record{}
	for _, r := range recs {
		if r.IsFlow() && r.Stack != nil {
			arms[r.Stack.Arm] = r
		}
	}
	want := []string{"tcp-cubic", "tcp-bbr", "quic", "quic-os-buffers", "quic-no-gso", "tcp-cubic-no-offload", "quic-no-offload", "ngtcp2-cubic", "ngtcp2-bbr"}
	if len(arms) != len(want) {
		t.Fatalf("arms %v, want %v", arms, want)
	}
	for _, a := range []string{"ngtcp2-cubic", "ngtcp2-bbr"} {
		if r := arms[a]; r == nil || r.CC != strings.TrimPrefix(a, "ngtcp2-") || r.Env == nil || !strings.HasPrefix(r.Env.QUIC, "ngtcp2 ") || r.SegmentsOut <= 0 {
			t.Errorf("arm %s: the ngtcp2 server's controller, version and counters not recorded: %+v", a, r)
		}
	}
	rdef := 0
	if b, err := os.ReadFile("/proc/sys/net/core/rmem_default"); err == nil {
		rdef, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	for _, a := range want {
		r := arms[a]
		if r == nil || !r.Valid || r.GoodputBps <= 0 || r.Stack.CPUSeconds <= 0 || r.Stack.Path != "veth" {
			t.Errorf("arm %s: %+v", a, r)
			continue
		}
		if r.Stack.QUICGSO != (a != "quic-no-gso") || r.Stack.Offloads != !strings.HasSuffix(a, "no-offload") {
			t.Errorf("arm %s: gso %v offloads %v", a, r.Stack.QUICGSO, r.Stack.Offloads)
		}
	}
	if r := arms["quic-os-buffers"]; r != nil && (r.Stack.UDPBuffers != "os-default" || r.Stack.UDPRecvBuf != rdef) {
		t.Errorf("os-default arm: %s, receive buffer %d, want rmem_default %d", r.Stack.UDPBuffers, r.Stack.UDPRecvBuf, rdef)
	}
	if r := arms["quic"]; r != nil && (r.Stack.UDPBuffers != "raised" || r.Stack.UDPRecvBuf < 10*rdef) {
		t.Errorf("raised arm: %s, receive buffer %d, want >= 10 x %d", r.Stack.UDPBuffers, r.Stack.UDPRecvBuf, rdef)
	}
}
