package experiment

import (
	"fmt"
	"strings"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// resumeFrom returns c set to continue the interrupted experiment whose records are recs (the
// output file's) on its schedule's jobs (Schedule.Resume passes its own): c takes the
// experiment's name (c.Name must be empty or the same) and Done lists the loads already made
// (plan.Made: those with a page-load line; a load that left only a harness_error line is made
// again). Every load line must be the load jobs puts at its run number, and the recorded
// settings must be c's (result.SettingDiffs): otherwise the flags differ from the interrupted
// run's and the error names the first difference.
func resumeFrom(c Config, jobs []Job, recs []*result.Record) (Config, error) {
	c = c.withName(recs)
	if c.Name == "" {
		return c, fmt.Errorf("nothing to resume: the file holds no line of an experiment (start the run without --resume)")
	}
	want := c.Settings()
	hash := ConfigHash(c)
	for _, r := range recs {
		if r.Kind != result.KindHarnessError && !r.IsLoad() {
			continue
		}
		if r.Experiment != c.Name {
			return c, fmt.Errorf("the file holds experiment %q, and this one is %q: resume continues the one experiment of a file", r.Experiment, c.Name)
		}
		if r.ConfigHash != "" && r.ConfigHash != hash {
			return c, fmt.Errorf("run %d was made with config_hash %s, and these flags and input files give %s%s: resume continues one configuration; start a new --out",
				r.Run, r.ConfigHash, hash, inputsNote(c))
		}
		if err := matchJob(c, jobs, r); err != nil {
			return c, err
		}
		if r.Settings == nil {
			continue // a line older than the recorded settings
		}
		if d := result.SettingDiffs(r.Settings, want); len(d) > 0 {
			return c, fmt.Errorf("run %d was made with other settings (settings.%s: %s in the file, %s from these flags)", r.Run, d[0].Path, d[0].A, d[0].B)
		}
	}
	c.Done = plan.Made(recs, func(r *result.Record) (int, bool) { return r.Run, r.IsLoad() })
	return c, nil
}

// inputsNote names c's input files with their digests (" (trace files now: a.trace sha256
// 1f2e..., changed since if it is one of them)"), "" when it has none.
func inputsNote(c Config) string {
	var parts []string
	for _, f := range InputFiles(c) {
		parts = append(parts, fmt.Sprintf("%s sha256 %.12s", f.Path, f.SHA256))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (input files now: " + strings.Join(parts, ", ") + "; one changed since, or a flag differs)"
}

// withName sets c.Name to the experiment of recs' loads when it is empty; a file that an
// interrupt ended before its first load (its link check or plan line written) names its
// experiment on those lines.
func (c Config) withName(recs []*result.Record) Config {
	if c.Name != "" {
		return c
	}
	for _, r := range recs {
		if r.IsLoad() || r.Kind == result.KindHarnessError {
			c.Name = r.Experiment
			return c
		}
	}
	for _, r := range recs {
		if (r.Kind == result.KindLinkCheck || r.Kind == result.KindPlan) && r.Experiment != "" {
			c.Name = r.Experiment
			return c
		}
	}
	return c
}

// matchJob checks that the line r is the load jobs[r.Run].
func matchJob(c Config, jobs []Job, r *result.Record) error {
	if r.Run < 0 || r.Run >= len(jobs) || (r.Scheduled != 0 && r.Scheduled != len(jobs)) {
		return fmt.Errorf("run %d of %d scheduled loads does not fit these flags' schedule of %d loads", r.Run, r.Scheduled, len(jobs))
	}
	j := jobs[r.Run]
	got := fmt.Sprintf("%s %s page %q link %q warmup %v", r.Protocol, r.Mode, r.Page.Spec, r.Link.Spec, r.Warmup)
	exp := fmt.Sprintf("%s %s page %q link %q warmup %v", j.Arm.Protocol, j.Arm.Mode, c.Pages[j.Page], c.Links[j.Link], j.Warmup)
	if got != exp {
		return fmt.Errorf("run %d is %s, but these flags schedule %s there", r.Run, got, exp)
	}
	return nil
}
