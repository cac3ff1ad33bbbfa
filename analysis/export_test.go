package analysis

import (
	"io"
	"log/slog"

	"github.com/pltlab/pltlab/result"
)

// WriteDir analyses recs and writes DirFiles into dir (created if missing): the markdown,
// HTML, JSON and CSV reports and the ECDF figure as SVG and PNG. It returns ErrNoRecords when
// recs hold no page loads (nothing is written then).
func WriteDir(dir string, recs []*result.Record, opts Options) error {
	rep := Analyze(recs, opts)
	if rep.Empty() {
		return ErrNoRecords
	}
	return rep.WriteDir(dir)
}

// ReadRecords reads every record of the JSON Lines stream r (named name in messages, "-" for
// stdin). A corrupt or truncated line is skipped with a warning on log naming the file and line,
// and counted in skipped; a record with out-of-range values (ValidateRecord) is refused the
// same way and counted in skipped too. At most MaxWarnings warnings of each kind are logged.
// A record of another schema version stops the read with an error wrapping
// result.ErrVersion; a read error is returned wrapped. log may be nil (no warnings).
func ReadRecords(r io.Reader, name string, log *slog.Logger) (recs []*result.Record, skipped int, err error) {
	recs, _, st, err := readRecords(r, name, log)
	return recs, st.Corrupt + st.RefusedCount, err
}
