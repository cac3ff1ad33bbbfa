package result

import (
	"fmt"
	"strings"
)

// RecheckedLinks names every link whose self-check ran more than once in recs (a failed check
// is repeated once before the link is refused; see selfcheck.Retry), one sentence
// per link in input order: "link carlucci2015 (experiment e) passed on its second check (the
// first failed: idle RTT min..max)" or "... failed both checks". A check carries its attempt
// number (LinkCheck.Attempt); in older records without it, a failed check followed directly by
// another check of the same link and experiment counts as its first attempt.
func RecheckedLinks(recs []*Record) []string {
	type key struct{ exp, link string }
	var out []string
	var prev map[key]*Record = map[key]*Record{}
	for _, r := range recs {
		if r.Kind != KindLinkCheck || r.Check == nil {
			continue
		}
		k := key{r.Experiment, r.Link.Spec}
		first := prev[k]
		retry := r.Check.Attempt > 1 || (r.Check.Attempt == 0 && first != nil && !first.Check.Pass)
		prev[k] = r
		if !retry {
			continue
		}
		why := "an earlier check"
		if first != nil && !first.Check.Pass {
			why = "the first failed: " + strings.Join(FailedLines(first.Check), "; ")
		}
		verdict := "passed on its second check"
		if !r.Check.Pass {
			verdict = "failed both checks"
		}
		out = append(out, fmt.Sprintf("link %s (experiment %s) %s (%s)", r.Link.Spec, r.Experiment, verdict, why))
		delete(prev, k)
	}
	return out
}

// FailedLines names the failed lines of a check: "NAME: measured M, configured C (TOLERANCE)".
func FailedLines(c *LinkCheck) []string {
	var bad []string
	for _, line := range c.Lines {
		if !line.Pass {
			bad = append(bad, fmt.Sprintf("%s: measured %s, configured %s (%s)", line.Name, line.Measured, line.Configured, line.Tolerance))
		}
	}
	return bad
}
