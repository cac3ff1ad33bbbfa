package result

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// randomRecord returns a record with every field set from r.
func randomRecord(r *rand.Rand, run int) *Record {
	rec := &Record{
		V:                Version,
		Experiment:       "exp",
		Run:              run,
		Time:             time.Unix(1700000000+int64(r.IntN(1e6)), 0).UTC(),
		Warmup:           r.IntN(2) == 0,
		Mode:             []Mode{Cold, Warm}[r.IntN(2)],
		Protocol:         []string{"h1", "h2", "h3"}[r.IntN(3)],
		ObservedProtocol: []string{"h1", "h2", "h3", "h3-29", ""}[r.IntN(5)],
		Page:             Page{Spec: "10x30KB", TotalBytes: 300000, Objects: 10},
		Link:             Link{Spec: "carlucci2015", DownBps: 3e6, UpBps: 3e6, RTTMs: 50, QueueBytes: 18750, MTU: 1500, Shaper: "emu"},
		PLTMs:            float64(r.IntN(1e6)) / 100,
		TTFBMs:           float64(r.IntN(1e5)) / 100,
		Valid:            r.IntN(2) == 0,
		TimedOut:         r.IntN(5) == 0,
		Browser:          "Chromium/156.0.8078.73",
		TCPCC:            "cubic",
		TLSVersion:       "1.3",
		Used0RTT:         r.IntN(2) == 0,
		Env:              &Env{Pltlab: "dev", Kernel: "6.1", CPUs: 2, Seed: int64(r.IntN(100))},
	}
	if !rec.Valid {
		rec.InvalidReason = "object /img/0001.jpg: 100 of 30000 bytes"
	}
	for i := range r.IntN(4) {
		rec.Resources = append(rec.Resources, Resource{URL: "https://plt.test/img/" + string(rune('a'+i)), Protocol: "h2",
			TransferSize: 30300, EncodedBodySize: 30000, StartMs: 1.5, EndMs: 99.25, Status: 200})
	}
	if r.IntN(2) == 0 {
		rec.Emulator = &Emulator{Down: Direction{PacketsIn: 10, BytesIn: 15000, PacketsOut: 9, BytesOut: 13500, DropsQueue: 1, QueueDelayMaxMs: 49.5}}
	}
	return rec
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var want []*Record
	for i := range 200 {
		rec := randomRecord(r, i)
		want = append(want, rec)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Count(buf.String(), "\n"); got != len(want) {
		t.Fatalf("wrote %d lines, want %d", got, len(want))
	}
	rd := NewReader(&buf, "mem")
	for i := 0; ; i++ {
		got, err := rd.Next()
		if err == io.EOF {
			if i != len(want) {
				t.Fatalf("read %d records, want %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("record %d differs after round trip:\n got %+v\nwant %+v", i, got, want[i])
		}
	}
}

func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantRecs int
		wantLine []int // lines of LineErrors, in order
		fatal    error
	}{
		{name: "empty", in: ""},
		{name: "blank lines", in: "\n\n  \n"},
		{name: "one", in: `{"v":1,"run":3}` + "\n", wantRecs: 1},
		{name: "no trailing newline", in: `{"v":1}`, wantRecs: 1},
		{name: "corrupt middle", in: "{\"v\":1}\n{\"v\":1,\"run\":\n{\"v\":1}\n", wantRecs: 2, wantLine: []int{2}},
		{name: "truncated last", in: "{\"v\":1}\n{\"v\":1,\"plt_ms\":12", wantRecs: 1, wantLine: []int{2}},
		{name: "missing v", in: "{\"run\":1}\n{\"v\":1}\n", wantRecs: 1, wantLine: []int{1}},
		{name: "wrong type", in: "{\"v\":1,\"plt_ms\":\"x\"}\n", wantLine: []int{1}},
		{name: "other version", in: "{\"v\":1}\n{\"v\":2}\n", wantRecs: 1, fatal: ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(tt.in), "f.jsonl")
			recs := 0
			var lines []int
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				var le *LineError
				if errors.As(err, &le) {
					if le.Name != "f.jsonl" {
						t.Errorf("LineError.Name = %q", le.Name)
					}
					lines = append(lines, le.Line)
					continue
				}
				if err != nil {
					if tt.fatal == nil || !errors.Is(err, tt.fatal) {
						t.Fatalf("unexpected error %v", err)
					}
					break
				}
				recs++
			}
			if recs != tt.wantRecs {
				t.Errorf("records = %d, want %d", recs, tt.wantRecs)
			}
			if !reflect.DeepEqual(lines, tt.wantLine) {
				t.Errorf("error lines = %v, want %v", lines, tt.wantLine)
			}
		})
	}
}

func TestVersionErrorMessage(t *testing.T) {
	rd := NewReader(strings.NewReader(`{"v":7}`), "old.jsonl")
	_, err := rd.Next()
	if err == nil || err.Error() != "old.jsonl:1: unsupported record schema version 7 (this pltlab reads v1)" {
		t.Fatalf("error = %v", err)
	}
}

func TestLongLine(t *testing.T) {
	rec := &Record{Experiment: strings.Repeat("x", 1<<20)}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(rec); err != nil {
		t.Fatal(err)
	}
	got, err := NewReader(&buf, "big").Next()
	if err != nil || len(got.Experiment) != 1<<20 {
		t.Fatalf("long line: err %v", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(`{"v":1,"run":1,"plt_ms":1.5,"resources":[{"url":"u"}]}` + "\n{bad\n"))
	f.Add([]byte(`{"v":2}`))
	f.Add([]byte("\n\n{\"v\":1,\"link\":{\"down_bps\":3000000}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), "fuzz")
		for range 10000 {
			rec, err := rd.Next()
			if err == io.EOF {
				return
			}
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				return
			}
			if err == nil && rec.V != Version {
				t.Fatalf("accepted record with v=%d", rec.V)
			}
		}
	})
}

func TestOverlongLineSkipped(t *testing.T) {
	in := io.MultiReader(strings.NewReader(`{"v":1,"run":1}`+"\n"), bytes.NewReader(bytes.Repeat([]byte("x"), MaxLineBytes+10)),
		strings.NewReader("\n"+`{"v":1,"run":2}`+"\n"))
	rd := NewReader(in, "big")
	var runs []int
	var lineErrs []int
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		var le *LineError
		if errors.As(err, &le) {
			lineErrs = append(lineErrs, le.Line)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r.Run)
	}
	if !reflect.DeepEqual(runs, []int{1, 2}) || !reflect.DeepEqual(lineErrs, []int{2}) {
		t.Fatalf("runs %v, line errors %v", runs, lineErrs)
	}
}

// TestReaderBOM: a UTF-8 byte order mark before the first record (an editor's) is not part of
// it: the record is read, not reported corrupt (on 8436f4a it was, and a measured load was
// lost); a BOM inside the file is still corrupt.
func TestReaderBOM(t *testing.T) {
	line := `{"v":1,"experiment":"e","run":0,"time":"2026-12-02T10:00:00Z","protocol":"h2","valid":true,"plt_ms":100}`
	rd := NewReader(strings.NewReader("\xef\xbb\xbf"+line+"\n"+line+"\n\xef\xbb\xbf"+line+"\n"), "bom")
	for i, wantErr := range []bool{false, false, true} {
		r, err := rd.Next()
		var le *LineError
		if gotErr := errors.As(err, &le); gotErr != wantErr || (!wantErr && (r == nil || r.PLTMs != 100)) {
			t.Errorf("line %d: record %+v, error %v; want error %v", i+1, r, err, wantErr)
		}
	}
}

// TestReaderInteropLines: an interop case's line as `pltlab interop --out` writes it (the case's
// own record, whose "link" is a string) and as a study wraps it are both read as KindInterop
// records holding the case's record in Interop; the flat line is kept whole.
func TestReaderInteropLines(t *testing.T) {
	flat := `{"v":1,"kind":"interop_case","time":"2026-12-07T02:00:00Z","case":"handshake","link":"rate=10mbit,rtt=30ms","outcome":"pass"}`
	wrapped := `{"v":1,"kind":"interop_case","experiment":"evolution/matrix","run":3,"time":"2026-12-07T02:00:01Z","valid":true,"interop":{"case":"v2","outcome":"fail"}}`
	rd := NewReader(strings.NewReader(flat+"\n"+wrapped+"\n"), "interop.jsonl")
	a, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind != KindInterop || string(a.Interop) != flat || a.Time != time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC) || a.Run != -1 {
		t.Errorf("flat line read as %+v", a)
	}
	b, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if b.Kind != KindInterop || string(b.Interop) != `{"case":"v2","outcome":"fail"}` || b.Run != 3 || b.Experiment != "evolution/matrix" {
		t.Errorf("wrapped line read as %+v", b)
	}
}
