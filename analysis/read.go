package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// MaxWarnings caps the warnings logged per kind and per file (corrupt lines, refused records);
// one more line then says how many were not shown.
const MaxWarnings = 10

// MaxDeadlineMs bounds every time of a record that has no deadline_ms (older files): a day.
const MaxDeadlineMs = 24 * 3600 * 1000.0

// ReadStats counts what a read left out.
type ReadStats struct {
	// Corrupt counts corrupt or truncated lines skipped.
	Corrupt int
	// Duplicates counts records dropped because a record equal in every field was read before.
	Duplicates int
	// Refused lists the records refused by ValidateRecord ("FILE:LINE: reason"), at most
	// MaxWarnings per file; RefusedCount counts them all.
	Refused      []string
	RefusedCount int
}

// ValidateRecord checks the values of a decoded record that JSON cannot: a known protocol (a
// row of protocol.Table) and mode (cold, warm or none) on page loads and harness_error lines,
// both as written, in lower case ("H2" and "hot" are refused alike), finite times within
// [0, deadline_ms] (MaxDeadlineMs when the record has no deadline), a deadline within
// [0, MaxDeadlineMs]. It returns one line naming the bad field and value and what is accepted.
func ValidateRecord(r *result.Record) error {
	if !r.IsLoad() && r.Kind != result.KindHarnessError {
		return nil
	}
	if !protocol.Known(r.Protocol) {
		return fmt.Errorf("protocol %q: accepted %s", r.Protocol, strings.Join(protocol.Names(), ", "))
	}
	if r.Mode != result.Cold && r.Mode != result.Warm && r.Mode != "" {
		return fmt.Errorf("mode %q: accepted %s, %s (or none, in records older than modes)", r.Mode, result.Cold, result.Warm)
	}
	if bad(r.DeadlineMs, MaxDeadlineMs) {
		return fmt.Errorf("deadline_ms %g: accepted 0..%g", r.DeadlineMs, MaxDeadlineMs)
	}
	limit := r.DeadlineMs
	if limit <= 0 {
		limit = MaxDeadlineMs
	}
	limit *= 1 + 1e-9 // a timed-out load's plt_ms is the deadline, give or take rounding
	for _, f := range []struct {
		name string
		v    float64
	}{{"plt_ms", r.PLTMs}, {"ttfb_ms", r.TTFBMs}, {"dcl_ms", r.DCLMs}, {"fcp_ms", r.FCPMs},
		{"connect_ms", r.ConnectMs}, {"tls_ms", r.TLSMs}} {
		if bad(f.v, limit) {
			return fmt.Errorf("%s %g: accepted 0..%g (the load's deadline)", f.name, f.v, limit)
		}
	}
	return nil
}

// bad reports whether v is not a finite number in [0, limit].
func bad(v, limit float64) bool {
	return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > limit
}

// readRecords reads every record of the JSON Lines stream r (named name in messages, "-" for
// stdin) and each one's line number. A corrupt or truncated line is skipped with a warning on
// log naming the file and line, and counted in st; a record with out-of-range values
// (ValidateRecord) is refused the same way and counted in st too. At most MaxWarnings warnings
// of each kind are logged. A record of another schema version stops the read with an error
// wrapping result.ErrVersion; a read error is returned wrapped. log may be nil (no warnings).
func readRecords(r io.Reader, name string, log *slog.Logger) (recs []*result.Record, lines []int, st ReadStats, err error) {
	rd := result.NewReader(r, name)
	defer func() {
		if log == nil {
			return
		}
		if n := st.Corrupt - MaxWarnings; n > 0 {
			log.Warn("more corrupt lines skipped, not shown", "file", name, "count", n)
		}
		if n := st.RefusedCount - MaxWarnings; n > 0 {
			log.Warn("more records refused, not shown", "file", name, "count", n)
		}
	}()
	for {
		rec, err := rd.Next()
		var le *result.LineError
		switch {
		case err == nil:
			if verr := ValidateRecord(rec); verr != nil {
				st.RefusedCount++
				if st.RefusedCount <= MaxWarnings {
					st.Refused = append(st.Refused, fmt.Sprintf("%s:%d: %v", name, rd.Line(), verr))
					if log != nil {
						log.Warn("refusing record", "file", name, "line", rd.Line(), "err", verr)
					}
				}
				continue
			}
			recs = append(recs, rec)
			lines = append(lines, rd.Line())
		case errors.Is(err, io.EOF):
			return recs, lines, st, nil
		case errors.As(err, &le):
			st.Corrupt++
			if log != nil && st.Corrupt <= MaxWarnings {
				log.Warn("skipping corrupt line", "file", le.Name, "line", le.Line, "err", le.Err)
			}
		case errors.Is(err, result.ErrVersion):
			return recs, lines, st, fmt.Errorf("refusing %s: %w", name, err)
		default:
			return recs, lines, st, err
		}
	}
}

// ReadFiles reads the named result files in order with readRecords; "-" reads stdin. It returns
// the records of all files and the number of lines skipped as corrupt or refused. A record
// equal in every field to one read before (the same file given twice, or a copy) is dropped
// with one warning; a different record of the same experiment, run, time, protocol and kind is
// kept (it is another measurement, never dropped as a duplicate). Duplicates are not counted
// as skipped (see ReadAll).
func ReadFiles(names []string, stdin io.Reader, log *slog.Logger) ([]*result.Record, int, error) {
	recs, st, err := ReadAll(names, stdin, log)
	return recs, st.Corrupt + st.RefusedCount, err
}

// ReadAll is ReadFiles returning every count of what was left out.
func ReadAll(names []string, stdin io.Reader, log *slog.Logger) ([]*result.Record, ReadStats, error) {
	var all []*result.Record
	var st ReadStats
	seen := map[loadKey][][]byte{}
	for _, name := range names {
		recs, _, fst, err := ReadFile(name, stdin, log)
		st.Corrupt += fst.Corrupt
		st.RefusedCount += fst.RefusedCount
		st.Refused = append(st.Refused, fst.Refused...)
		for _, r := range recs {
			k := loadKey{r.Experiment, r.Run, r.Time.UnixNano(), r.Protocol, r.Kind, -1, r.Shard}
			if r.Flow != nil {
				k.flow = r.FlowIndex
			}
			b, _ := json.Marshal(r) // a decoded record always encodes
			if slices.ContainsFunc(seen[k], func(o []byte) bool { return bytes.Equal(o, b) }) {
				st.Duplicates++
				continue
			}
			seen[k] = append(seen[k], b)
			all = append(all, r)
		}
		if err != nil {
			return all, st, err
		}
	}
	if st.Duplicates > 0 && log != nil {
		log.Warn("skipping duplicate records (the same load read twice)", "count", st.Duplicates)
	}
	return all, st, nil
}

// loadKey identifies one record of one experiment.
type loadKey struct {
	experiment string
	run        int
	time       int64
	protocol   string
	kind       result.Kind
	flow       int    // the flow's index on flow lines (several flows share run and time), else -1
	shard      string // two shards' lines are never the same line (each makes its links' warm-ups)
}

// ReadFile reads one result file like readRecords ("-" reads stdin), without dropping
// duplicates, and returns each record's line number in the file (from 1) in lines, parallel to
// recs, with every count of what was left out.
func ReadFile(name string, stdin io.Reader, log *slog.Logger) (recs []*result.Record, lines []int, st ReadStats, err error) {
	if name == "-" {
		return readRecords(stdin, name, log)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, ReadStats{}, fmt.Errorf("read results: %w", err)
	}
	defer f.Close()
	return readRecords(f, name, log)
}

// AnalyzeFiles reads the named files (see ReadAll) and analyses them. It returns ErrNoRecords
// (wrapped, naming the files) when they hold no page loads and no flows; the Report is then still returned
// with its read counts set.
func AnalyzeFiles(names []string, stdin io.Reader, opts Options, log *slog.Logger) (*Report, error) {
	recs, st, err := ReadAll(names, stdin, log)
	if err != nil {
		return nil, err
	}
	rep := Analyze(recs, opts)
	rep.SetReadStats(st)
	if rep.Empty() && !rep.HasFlows() {
		return rep, fmt.Errorf("%s: %w (%d records read, %d corrupt lines skipped, %d records refused)",
			strings.Join(names, ", "), ErrNoRecords, len(recs), st.Corrupt, st.RefusedCount)
	}
	return rep, nil
}

// SetReadStats records in r what the read left out.
func (r *Report) SetReadStats(st ReadStats) {
	r.SkippedLines, r.Duplicates, r.Refused, r.RefusedCount = st.Corrupt, st.Duplicates, st.Refused, st.RefusedCount
}
