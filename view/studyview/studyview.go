// Package studyview gives pltlab view the reports of package studies: it adapts a study's
// evidence to view.Study, so that view itself depends on nothing that measures.
package studyview

import (
	"fmt"
	"io"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/studies"
	"github.com/pltlab/pltlab/view"
)

// compile-time check that Report is a view.StudyFunc.
var _ view.StudyFunc = Report

// Report is a view.StudyFunc: the report of the study whose records recs are (studies.Identify
// finds the study and its scale, of page-load parts, flow parts or a study's own schedule),
// judged by the plan as measured (studies.FromRecords: the parts' pages, links, arms and runs,
// the flows' runs and durations as recorded, as reproduce's report judges them) and rendered
// by package studies: its findings with links to the sections they cite, and report.html's
// body, figures and parts. nil when recs are no study's.
func Report(recs []*result.Record) (*view.Study, error) {
	st, plan, exact, ok := studies.Identify(recs)
	if !ok {
		return nil, nil
	}
	scale := plan.Scale
	plan = studies.FromRecords(plan, recs)
	ev := studies.Evaluate(st, plan, recs)
	body, err := ev.ReportBody("findings")
	if err != nil {
		return nil, err
	}
	vs := &view.Study{Title: ev.Title(), Body: body,
		Figure: func(w io.Writer, file, format string) (bool, error) { return ev.RenderFigure(w, file, format) },
		Part: func(name string) *analysis.Report {
			if pr := ev.Part(name); pr != nil {
				return pr.Report
			}
			return nil
		}}
	if !exact {
		vs.Note = fmt.Sprintf("The records match no scale's configuration (run with --runs or --seed): the plan shown is what they measured, on scale %s's design.", scale)
	}
	anchors := ev.SectionAnchors()
	for i, j := range ev.Judge() {
		fd := st.Findings[i]
		vf := view.Finding{Claim: fd.Claim, Source: fd.Source, Criterion: fd.Criterion, Verdict: string(j.Verdict), Evidence: j.Evidence}
		for _, t := range j.See {
			vf.See = append(vf.See, view.Anchor{Title: t, ID: anchors[t]})
		}
		vs.Findings = append(vs.Findings, vf)
	}
	return vs, nil
}
