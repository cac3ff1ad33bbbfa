package analysis

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/analysis/internal/synth"
	"github.com/pltlab/pltlab/result"
)

// FuzzReadAnalyze feeds arbitrary bytes through the decoding path and every text writer: it
// must never panic, whatever the input.
func FuzzReadAnalyze(f *testing.F) {
	o := synth.Default()
	o.Runs = 3
	var buf bytes.Buffer
	for _, line := range strings.SplitAfter(jsonlOf(synth.Records(o)), "\n")[:8] {
		buf.WriteString(line)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"v":1,"protocol":"h2","timed_out":true,"plt_ms":-1e308,"deadline_ms":"x"}`))
	f.Add([]byte(`{"v":1,"protocol":"h1","valid":true,"plt_ms":1e308,"link":{"down_bps":-5}}` + "\n{\"v\":1"))
	f.Add([]byte(`{"v":3}`))
	f.Add([]byte("\n\n{}\n[1,2]\nnull\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, _, err := ReadRecords(bytes.NewReader(data), "fuzz", nil)
		if err != nil {
			return
		}
		rep := Analyze(recs, Options{Bootstrap: 50})
		for _, fm := range []Format{Text, Markdown, CSV, JSON} {
			if err := rep.Write(io.Discard, fm); err != nil {
				t.Fatalf("%s: %v", fm, err)
			}
		}
	})
}

func jsonlOf(recs []*result.Record) string {
	var buf bytes.Buffer
	w := result.NewWriter(&buf)
	for _, r := range recs {
		w.Write(r)
	}
	return buf.String()
}
