package analysis

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/analysis/internal/synth"
	"github.com/pltlab/pltlab/result"
)

func jsonl(t *testing.T, recs []*result.Record) string {
	t.Helper()
	var buf bytes.Buffer
	w := result.NewWriter(&buf)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.String()
}

func TestReadSkipsCorruptLines(t *testing.T) {
	good := jsonl(t, synth.Records(synth.Default()))
	lines := strings.SplitAfter(good, "\n")
	// Line 3 is replaced by garbage, and the last line is truncated mid-object.
	lines[2] = "{not json\n"
	last := len(lines) - 2
	lines[last] = lines[last][:len(lines[last])/2]
	input := strings.Join(lines[:last+1], "")

	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	recs, skipped, err := ReadRecords(strings.NewReader(input), "results.jsonl", log)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 2 || len(recs) != last-1 {
		t.Errorf("skipped %d, read %d; want 2 and %d", skipped, len(recs), last-1)
	}
	for _, want := range []string{"file=results.jsonl line=3", "line=" + strconv.Itoa(last+1)} {
		if !strings.Contains(logBuf.String(), want) {
			t.Errorf("warnings lack %q:\n%s", want, logBuf.String())
		}
	}
}

func TestReadFilesErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v2 := write("v2.jsonl", `{"v":2,"protocol":"h1"}`+"\n")
	empty := write("empty.jsonl", "")
	onlyCheck := write("check.jsonl", `{"v":1,"kind":"link_check","link":{"spec":"x"}}`+"\n")

	if _, err := AnalyzeFiles([]string{v2}, nil, Options{}, nil); !errors.Is(err, result.ErrVersion) ||
		!strings.Contains(err.Error(), "v2.jsonl") {
		t.Errorf("v2 file: %v, want an ErrVersion naming the file", err)
	}
	for _, p := range []string{empty, onlyCheck} {
		if _, err := AnalyzeFiles([]string{p}, nil, Options{}, nil); !errors.Is(err, ErrNoRecords) {
			t.Errorf("%s: %v, want ErrNoRecords", p, err)
		}
	}
	if _, err := AnalyzeFiles([]string{filepath.Join(dir, "missing.jsonl")}, nil, Options{}, nil); err == nil {
		t.Error("missing file accepted")
	}
	stdin := strings.NewReader(jsonl(t, synth.Records(synth.Default())))
	rep, err := AnalyzeFiles([]string{"-"}, stdin, Options{}, nil)
	if err != nil || len(rep.Groups) != 6 {
		t.Errorf("stdin: %v, %d groups", err, len(rep.Groups))
	}
}
