package studies

import (
	"errors"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/analysis"
)

// TestDecideKeepsTheRules checks the rules of --decide: loads of two pltlab versions are never
// pooled, and only a complete reproduction is decided; a complete one of this version gets the
// plan of its missing loads.
func TestDecideKeepsTheRules(t *testing.T) {
	recs, _, err := analysis.ReadFiles([]string{"../testdata/carlucci2015-quick-a9b0be5.jsonl"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := Lookup(Carlucci2015)
	plan := st.Plan(Quick)
	if _, _, err := Decide(st, plan, recs, "other"); !errors.Is(err, ErrNotDecidable) || !strings.Contains(err.Error(), "never pooled") || !strings.Contains(err.Error(), "pltlab a9b0be5") {
		t.Errorf("another version: %v", err)
	}
	if _, _, err := Decide(st, plan, recs[:len(recs)/2], "a9b0be5"); !errors.Is(err, ErrNotDecidable) || !strings.Contains(err.Error(), "not a complete reproduction") {
		t.Errorf("half a reproduction: %v", err)
	}
	dp, _, err := Decide(st, plan, recs, "a9b0be5")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range dp.Parts {
		if !strings.Contains(p.Name, decideTag) || p.Config.Runs <= 0 || p.Config.Runs > MaxDecideRuns {
			t.Errorf("decide part %s: %d runs", p.Name, p.Config.Runs)
		}
	}
}
