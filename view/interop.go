package view

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// interopCase is what the view reads of an interop case's record (interop.Record's JSON, kept
// by result.Record.Interop): the view does not link the interop package.
type interopCase struct {
	Case     string            `json:"case"`
	Rule     string            `json:"rule"`
	Client   string            `json:"client"`
	Server   string            `json:"server"`
	Versions map[string]string `json:"versions"`
	Link     string            `json:"link"`
	Outcome  string            `json:"outcome"`
	Reason   string            `json:"reason"`
	Observed json.RawMessage   `json:"evidence"`
}

// interopGrid is a set's interop cases as a table for people: a row per case, a column per
// client and server pair, in the order first met.
type interopGrid struct {
	Pairs []string
	Rows  []interopRow
}

// interopRow is one case's cells, one per pair (nil: the case did not run for that pair).
type interopRow struct {
	Case, Rule string
	Cells      []*interopCell
}

// interopCell is what the runs of one case between one client and server gave: each
// outcome's count ("pass 2", "pass 1, fail 1"), the class of the worst outcome (error, fail,
// unsupported, pass), and each run's reason and evidence.
type interopCell struct {
	Class, Counts string
	Runs          []interopRun
}

// interopRun is one run of a cell: its outcome, reason, link, the versions that ran and the
// evidence (indented JSON).
type interopRun struct {
	Outcome, Reason, Link, Versions, Observed string
}

// interopRank orders outcomes from best to worst for a cell's class.
var interopRank = []string{"pass", "unsupported", "fail", "error"}

// interopGridOf builds the grid of the KindInterop lines of recs; nil when there are none. A
// line whose interop record does not decode counts as an error run saying so.
func interopGridOf(recs []*result.Record) *interopGrid {
	g := &interopGrid{}
	cells := map[[2]string]*interopCell{}
	rows := map[string]int{}
	for _, r := range recs {
		if r.Kind != result.KindInterop {
			continue
		}
		var c interopCase
		if err := json.Unmarshal(r.Interop, &c); err != nil || c.Case == "" {
			c = interopCase{Case: "(unreadable)", Outcome: "error", Reason: fmt.Sprintf("interop record not readable: %v", err)}
		}
		pair := pairName(c)
		if !slices.Contains(g.Pairs, pair) {
			g.Pairs = append(g.Pairs, pair)
		}
		if _, ok := rows[c.Case]; !ok {
			rows[c.Case] = len(g.Rows)
			g.Rows = append(g.Rows, interopRow{Case: c.Case, Rule: c.Rule})
		}
		cell := cells[[2]string{c.Case, pair}]
		if cell == nil {
			cell = &interopCell{}
			cells[[2]string{c.Case, pair}] = cell
		}
		ev := string(c.Observed)
		if b, err := json.MarshalIndent(c.Observed, "", "  "); err == nil && len(c.Observed) > 0 {
			ev = string(b)
		}
		var vs []string
		for _, role := range slices.Sorted(maps.Keys(c.Versions)) {
			vs = append(vs, role+" "+c.Versions[role])
		}
		cell.Runs = append(cell.Runs, interopRun{Outcome: c.Outcome, Reason: c.Reason, Link: c.Link, Versions: strings.Join(vs, "; "), Observed: ev})
	}
	if len(g.Rows) == 0 {
		return nil
	}
	for i := range g.Rows {
		row := &g.Rows[i]
		for _, p := range g.Pairs {
			cell := cells[[2]string{row.Case, p}]
			if cell != nil {
				cell.Class, cell.Counts = outcomeSummary(cell.Runs)
			}
			row.Cells = append(row.Cells, cell)
		}
	}
	return g
}

// pairName names a cell's column, "client → server" (a release pins its version in its name:
// quic-go@v0.40.1; the versions that ran are in each run's details).
func pairName(c interopCase) string { return c.Client + " → " + c.Server }

// outcomeSummary returns the class of runs' worst outcome and each outcome's count, best first.
func outcomeSummary(runs []interopRun) (class, counts string) {
	n := map[string]int{}
	for _, r := range runs {
		n[r.Outcome]++
	}
	var parts []string
	worst := -1
	for i, o := range interopRank {
		if n[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, n[o]))
			worst = i
			delete(n, o)
		}
	}
	for _, o := range slices.Sorted(maps.Keys(n)) { // an outcome the view does not know: shown, ranked worst
		parts = append(parts, fmt.Sprintf("%s %d", o, n[o]))
		worst = len(interopRank) - 1
	}
	return "io-" + interopRank[max(worst, 0)], strings.Join(parts, ", ")
}
