package studies

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// Identify finds the study and scale whose plan made recs, for tools that read a study's
// records without its command line (pltlab view). A scale is identified when one of its
// parts' configuration hashes (experiment.ConfigHash, which covers runs and seed) equals a
// record's; a study run with --runs or --seed matches no scale and gets the study's default
// scale with exact false. ok is false when no record belongs to a study (no experiment named
// PartExperiment(study, part)).
func Identify(recs []*result.Record) (s *Study, plan Plan, exact, ok bool) {
	hashes, names := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		if r.ConfigHash != "" {
			hashes[r.ConfigHash] = true
		}
		names[r.Experiment] = true
	}
	for _, st := range registry {
		if !belongs(st, names) {
			continue
		}
		for _, sc := range Scales {
			p := st.Plan(sc)
			for _, c := range p.Configs(RunOptions{}) {
				if hashes[experiment.ConfigHash(c)] {
					return st, p, true, true
				}
			}
		}
		return st, st.Plan(st.DefaultScale), false, true
	}
	return nil, Plan{}, false, false
}

// belongs reports whether one of the experiment names is a part of st at some scale.
func belongs(st *Study, names map[string]bool) bool {
	for _, sc := range Scales {
		for _, p := range st.Plan(sc).Parts {
			if names[PartExperiment(st.Name, p.Name)] {
				return true
			}
		}
	}
	return false
}

// Title is the report's heading, as report.html shows it.
func (e *Support) Title() string { return e.title() }

// SectionAnchors maps the title of every section of the report to its ID (the anchor of its
// section element in report.html); a Judgement's See names sections by title.
func (e *Support) SectionAnchors() map[string]string {
	out := map[string]string{}
	for _, s := range e.sections(e.Judge()) {
		out[s.Title] = s.ID
	}
	return out
}

// ReportBody returns what report.html shows between <body> and </body>, rendered by the same
// template, leaving out the sections whose ID is in skip (a page that shows the findings table
// itself skips "findings"). Figures are referenced as FILE.svg relative to the page, as in
// report.html; RenderFigure draws them.
func (e *Support) ReportBody(skip ...string) (string, error) {
	js := e.Judge()
	secs := slices.DeleteFunc(e.sections(js), func(s Section) bool { return slices.Contains(skip, s.ID) })
	var buf bytes.Buffer
	if err := e.writeHTML(&buf, secs); err != nil {
		return "", fmt.Errorf("study report body: %w", err)
	}
	doc := buf.String()
	start, end := strings.Index(doc, "<body>"), strings.LastIndex(doc, "</body>")
	if start < 0 || end < start {
		return "", fmt.Errorf("study report body: no <body> element")
	}
	return doc[start+len("<body>") : end], nil
}

// RenderFigure writes the report's figure whose Figure.File is file in format "svg" or "png".
// found is false when the report has no such figure.
func (e *Support) RenderFigure(w io.Writer, file, format string) (found bool, err error) {
	for _, s := range e.sections(e.Judge()) {
		for _, f := range s.Figures {
			if f.File == file {
				return true, f.Render(w, format)
			}
		}
	}
	return false, nil
}
