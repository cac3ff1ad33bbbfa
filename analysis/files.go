package analysis

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pltlab/pltlab/internal/fileout"
	"github.com/pltlab/pltlab/result"
)

// Summary analyses recs and writes the text report (WriteText) to w: the call for a runner
// that wants to print the table after an experiment. It returns ErrNoRecords when recs hold no
// page loads (after printing that there are none).
func Summary(w io.Writer, recs []*result.Record, opts Options) error {
	rep := Analyze(recs, opts)
	if err := rep.WriteText(w); err != nil {
		return err
	}
	if rep.Empty() {
		return ErrNoRecords
	}
	return nil
}

// DirFiles are the files WriteDir writes, in order.
var DirFiles = []string{"report.md", "report.html", "report.json", "report.csv", "plt.svg", "plt.png"}

// WriteDir writes DirFiles for r into dir (created if missing).
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report dir: %w", err)
	}
	var errs []error
	write := func(name string, fn func(io.Writer) error) {
		if err := fileout.Create(filepath.Join(dir, name), fn); err != nil {
			errs = append(errs, err)
		}
	}
	write("report.md", r.WriteMarkdown)
	write("report.html", r.WriteHTML)
	write("report.json", r.WriteJSON)
	write("report.csv", r.WriteCSV)
	write("plt.svg", func(w io.Writer) error { return r.WritePlot(w, ECDFPlot, "svg") })
	write("plt.png", func(w io.Writer) error { return r.WritePlot(w, ECDFPlot, "png") })
	return errors.Join(errs...)
}
