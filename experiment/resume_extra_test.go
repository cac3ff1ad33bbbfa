package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestResumeRefusesChangedInput: a load line made with another configuration hash (a trace
// file replaced between the interrupt and the resume) is refused, naming both hashes and the
// input file's digest now; on 8436f4a the run went on with the new trace in the same
// experiment.
func TestResumeRefusesChangedInput(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "a.trace")
	if err := os.WriteFile(trace, []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{Pages: []string{"2x10KB"}, Links: []string{"down=trace:" + trace + ",up=10mbit,rtt=20ms"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}),
		Runs: 2, Name: "t"}
	jobs := Order(c)
	j := jobs[0]
	line := func(hash string) *result.Record {
		return &result.Record{Experiment: "t", Run: 0, Protocol: j.Arm.Protocol, Mode: j.Arm.Mode, Warmup: j.Warmup, Scheduled: len(jobs),
			Page: result.Page{Spec: "2x10KB"}, Link: result.Link{Spec: c.Links[0]}, Valid: true, ConfigHash: hash}
	}
	if _, err := ResumeFrom(c, []*result.Record{line(ConfigHash(c))}); err != nil {
		t.Fatalf("same configuration: %v", err)
	}
	old := ConfigHash(c)
	if err := os.WriteFile(trace, []byte("1\n20\n30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ResumeFrom(c, []*result.Record{line(old)})
	if err == nil || !strings.Contains(err.Error(), "config_hash "+old) || !strings.Contains(err.Error(), trace+" sha256") {
		t.Errorf("a changed trace: %v", err)
	}
}

// TestResumeAfterInterruptedCheck: a file that an interrupt ended during the first link check
// (only its link_check line written) is resumed from the start, not refused with "nothing to
// resume" as on 8436f4a, where the interrupted run had advised --resume.
func TestResumeAfterInterruptedCheck(t *testing.T) {
	c := Config{Pages: []string{"2x10KB"}, Links: []string{"none"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 1}
	got, err := ResumeFrom(c, []*result.Record{{Kind: result.KindLinkCheck, Experiment: "exp-1", Run: -1}})
	if err != nil || got.Name != "exp-1" || len(got.Done) != 0 {
		t.Errorf("resume of a file with only a link check: name %q, done %v, %v", got.Name, got.Done, err)
	}
}
