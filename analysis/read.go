package analysis

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// ReadRecords reads every record of the JSON Lines stream r (named name in messages, "-" for
// stdin). A corrupt or truncated line is skipped with a warning on log naming the file and line,
// and counted in skipped. A record of another schema version stops the read with an error
// wrapping result.ErrVersion; a read error is returned wrapped. log may be nil (no warnings).
func ReadRecords(r io.Reader, name string, log *slog.Logger) (recs []*result.Record, skipped int, err error) {
	rd := result.NewReader(r, name)
	for {
		rec, err := rd.Next()
		var le *result.LineError
		switch {
		case err == nil:
			recs = append(recs, rec)
		case errors.Is(err, io.EOF):
			return recs, skipped, nil
		case errors.As(err, &le):
			skipped++
			if log != nil {
				log.Warn("skipping corrupt line", "file", le.Name, "line", le.Line, "err", le.Err)
			}
		case errors.Is(err, result.ErrVersion):
			return recs, skipped, fmt.Errorf("refusing %s: %w", name, err)
		default:
			return recs, skipped, err
		}
	}
}

// ReadFiles reads the named result files in order with ReadRecords; "-" reads stdin. It returns
// the records of all files and the total number of skipped lines. A load seen before (same
// experiment, run, time and protocol: the same file given twice, or a copy) is dropped with a
// warning and counted as skipped, so that no load is counted twice.
func ReadFiles(names []string, stdin io.Reader, log *slog.Logger) ([]*result.Record, int, error) {
	var all []*result.Record
	skipped, dups := 0, 0
	seen := map[loadKey]bool{}
	for _, name := range names {
		recs, n, err := readFile(name, stdin, log)
		skipped += n
		for _, r := range recs {
			k := loadKey{r.Experiment, r.Run, r.Time.UnixNano(), r.Protocol, r.Kind, -1}
			if r.Flow != nil {
				k.flow = r.FlowIndex
			}
			if seen[k] {
				dups++
				continue
			}
			seen[k] = true
			all = append(all, r)
		}
		if err != nil {
			return all, skipped + dups, err
		}
	}
	if dups > 0 && log != nil {
		log.Warn("skipping duplicate records (the same load read twice)", "count", dups)
	}
	return all, skipped + dups, nil
}

// loadKey identifies one record of one experiment.
type loadKey struct {
	experiment string
	run        int
	time       int64
	protocol   string
	kind       result.Kind
	flow       int // the flow's index on flow lines (several flows share run and time), else -1
}

func readFile(name string, stdin io.Reader, log *slog.Logger) ([]*result.Record, int, error) {
	if name == "-" {
		return ReadRecords(stdin, name, log)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, fmt.Errorf("read results: %w", err)
	}
	defer f.Close()
	return ReadRecords(f, name, log)
}

// AnalyzeFiles reads the named files (see ReadFiles) and analyses them. It returns ErrNoRecords
// (wrapped, naming the files) when they hold no page loads and no flows; the Report is then still returned
// with its SkippedLines set.
func AnalyzeFiles(names []string, stdin io.Reader, opts Options, log *slog.Logger) (*Report, error) {
	recs, skipped, err := ReadFiles(names, stdin, log)
	if err != nil {
		return nil, err
	}
	rep := Analyze(recs, opts)
	rep.SkippedLines = skipped
	if rep.Empty() && !rep.HasFlows() {
		return rep, fmt.Errorf("%s: %w (%d records read, %d corrupt lines skipped)", strings.Join(names, ", "), ErrNoRecords, len(recs), skipped)
	}
	return rep, nil
}
