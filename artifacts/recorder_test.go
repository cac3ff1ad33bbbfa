package artifacts

import (
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// fakeLink is a Capturer link whose capture writes a fixed file, loses lost events, or fails
// to start.
type fakeLink struct {
	path     string
	lost     int64
	startErr error
}

func (l *fakeLink) Namespace() string              { return "ns" }
func (l *fakeLink) HostAddr() netip.Addr           { return netip.MustParseAddr("10.0.0.1") }
func (l *fakeLink) ClientAddr() netip.Addr         { return netip.MustParseAddr("10.0.0.2") }
func (l *fakeLink) Spec() linkspec.Spec            { return linkspec.Spec{} }
func (l *fakeLink) TakeCounters() *result.Emulator { return nil }
func (l *fakeLink) Close() error                   { return nil }
func (l *fakeLink) StartCapture(path string) error {
	if l.startErr != nil {
		return l.startErr
	}
	l.path = path
	return os.WriteFile(path, []byte("pcapng"), 0o644)
}
func (l *fakeLink) StopCapture([]byte) (capture.Stats, error) {
	return capture.Stats{Packets: 100, Lost: l.lost}, nil
}

func newRecorder(t *testing.T, kinds ...Kind) (*Recorder, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := NewRecorder(Config{Dir: dir, Kinds: kinds}, "exp", nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// TestRecorderCaptureLossIsFailure checks that a capture that lost packet events is listed as
// failed with the count, not as evidence.
func TestRecorderCaptureLossIsFailure(t *testing.T) {
	r, _ := newRecorder(t, Pcap)
	l := &fakeLink{lost: 7}
	if _, err := r.Begin(3, l); err != nil {
		t.Fatal(err)
	}
	rec := &result.Record{}
	if err := r.End(true, []*result.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if len(rec.Artifacts) != 0 || len(rec.ArtifactsFailed) != 1 ||
		rec.ArtifactsFailed[0].Path != "exp/run-0003/link.pcapng" || !strings.Contains(rec.ArtifactsFailed[0].Error, "lost 7 of 107") {
		t.Fatalf("artifacts %v, failed %+v; want the pcapng failed with 'lost 7 of 107'", rec.Artifacts, rec.ArtifactsFailed)
	}
}

// TestRecorderStartCaptureFailsLeavesNoFolder checks that a capture that cannot start leaves
// no load folder behind.
func TestRecorderStartCaptureFailsLeavesNoFolder(t *testing.T) {
	r, dir := newRecorder(t, Pcap)
	if _, err := r.Begin(0, &fakeLink{startErr: errors.New("busy")}); err == nil {
		t.Fatal("Begin succeeded although the capture failed")
	}
	if _, err := os.Stat(filepath.Join(dir, "exp", "run-0000")); !os.IsNotExist(err) {
		t.Fatalf("load folder left behind: %v", err)
	}
}

// TestRecorderWholeAndFailed checks that a file a writer reported, and an empty file, are listed
// as failed, and only the whole one as evidence; and that every record of a flow run gets the
// same lists.
func TestRecorderWholeAndFailed(t *testing.T) {
	r, _ := newRecorder(t, HAR, Qlog)
	dir, err := r.Begin(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "h3-server-a.sqlog"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "h3-server-b.sqlog"), nil, 0o644)
	r.Fail(LoadFileHAR, errors.New("no space left on device"))
	recs := []*result.Record{{}, {}}
	if err := r.End(true, recs); err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if !slices.Equal(rec.Artifacts, []string{"exp/run-0001/h3-server-a.sqlog"}) {
			t.Errorf("artifacts %v, want only the whole qlog", rec.Artifacts)
		}
		if len(rec.ArtifactsFailed) != 2 || rec.ArtifactsFailed[0].Path != "exp/run-0001/h3-server-b.sqlog" ||
			rec.ArtifactsFailed[0].Error != "empty file" || rec.ArtifactsFailed[1].Path != "exp/run-0001/load.har" {
			t.Errorf("failed %+v, want the empty qlog and the HAR", rec.ArtifactsFailed)
		}
	}
}

// TestRecorderRedoStartsEmpty checks that a load redone after a killed attempt starts from an
// empty folder of its own: the earlier attempt's files are neither touched nor listed, and a
// third attempt takes the next name.
func TestRecorderRedoStartsEmpty(t *testing.T) {
	r, _ := newRecorder(t, Qlog)
	stale := filepath.Join(r.ExperimentDir(), "run-0002")
	os.MkdirAll(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "h3-server-old.sqlog"), []byte("old"), 0o644)
	dir, err := r.Begin(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dir != stale+".2" {
		t.Fatalf("redone load's folder %s, want %s.2", dir, stale)
	}
	os.WriteFile(filepath.Join(dir, "h3-server-new.sqlog"), []byte("new"), 0o644)
	rec := &result.Record{}
	if err := r.End(true, []*result.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.Artifacts, []string{"exp/run-0002.2/h3-server-new.sqlog"}) {
		t.Fatalf("artifacts %v, want only the redone load's qlog", rec.Artifacts)
	}
	if b, err := os.ReadFile(filepath.Join(stale, "h3-server-old.sqlog")); err != nil || string(b) != "old" {
		t.Fatalf("the earlier attempt's file was touched: %q, %v", b, err)
	}
	if dir, err = r.Begin(2, nil); err != nil || dir != stale+".3" {
		t.Fatalf("third attempt: %s, %v; want %s.3", dir, err, stale)
	}
}

// TestStaleParts finds the .part files of a killed process and CheckWritable refuses a folder
// that cannot be created.
func TestStaleParts(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "exp", "run-0000", LoadFilePcap+PartSuffix)
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("x"), 0o644)
	parts, err := StaleParts(dir)
	if err != nil || !slices.Equal(parts, []string{p}) {
		t.Fatalf("StaleParts = %v, %v; want [%s]", parts, err, p)
	}
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o644)
	if err := CheckWritable(filepath.Join(notDir, "sub")); err == nil {
		t.Fatal("CheckWritable accepted a folder under a file")
	}
	if err := CheckWritable(dir); err != nil {
		t.Fatal(err)
	}
}

// TestRecorderNotKeptClaimsNothing checks that a load whose files are not kept (--artifacts-for)
// lists neither evidence nor failures, even when a writer reported one, and leaves no folder.
func TestRecorderNotKeptClaimsNothing(t *testing.T) {
	r, _ := newRecorder(t, HAR)
	dir, err := r.Begin(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &result.Record{ArtifactsFailed: []result.ArtifactFailure{{Path: filepath.Join(dir, LoadFileHAR), Error: "disk full"}}}
	if err := r.End(false, []*result.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if rec.Artifacts != nil || rec.ArtifactsFailed != nil {
		t.Fatalf("not kept, but lists %v and %v", rec.Artifacts, rec.ArtifactsFailed)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("folder left: %v", err)
	}
}

// partLink is a capture whose file never got past its .part name (a full disk).
type partLink struct{ fakeLink }

func (l *partLink) StartCapture(path string) error {
	l.path = path
	return os.WriteFile(path+PartSuffix, []byte("pcap"), 0o644)
}
func (l *partLink) StopCapture([]byte) (capture.Stats, error) {
	return capture.Stats{}, errors.New("no space left on device")
}

// TestRecorderFailedPcapListedOnce: a capture that failed with its file left as *.part is one
// failure, under the name on disk, with the writer's error (on 8436f4a it was listed twice, once
// under a name that never existed).
func TestRecorderFailedPcapListedOnce(t *testing.T) {
	r, _ := newRecorder(t, Pcap)
	if _, err := r.Begin(2, &partLink{}); err != nil {
		t.Fatal(err)
	}
	rec := &result.Record{}
	if err := r.End(true, []*result.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if len(rec.ArtifactsFailed) != 1 || rec.ArtifactsFailed[0].Path != "exp/run-0002/link.pcapng"+PartSuffix ||
		!strings.Contains(rec.ArtifactsFailed[0].Error, "no space left") {
		t.Errorf("failed %+v, want the one .part file with the capture's error", rec.ArtifactsFailed)
	}
}

// TestCutNetLogs: a NetLog whose process is gone and whose JSON is not complete (a browser
// killed with its pltlab) is renamed *.cut at the next start, so that no record lists it as
// whole; a complete one, or one of a live process, is left alone (on 8436f4a truncated NetLogs
// stayed listed as written whole).
func TestCutNetLogs(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp")
	os.MkdirAll(exp, 0o755)
	dead := 0
	for pid := 400000; pid < 4194304; pid += 7919 {
		if !processAlive(pid) {
			dead = pid
			break
		}
	}
	cut := filepath.Join(exp, "netlog-h2-"+strconv.Itoa(dead)+"-1.json")
	whole := filepath.Join(exp, "netlog-h3-"+strconv.Itoa(dead)+"-1.json")
	live := filepath.Join(exp, "netlog-h1-"+strconv.Itoa(os.Getppid())+"-1.json")
	os.WriteFile(cut, []byte(`{"constants":{},"events":[{"a":1},`), 0o644)
	os.WriteFile(whole, []byte(`{"constants":{},"events":[]}`), 0o644)
	os.WriteFile(live, []byte(`{"constants":{},"events":[`), 0o644)
	got := CutNetLogs(dir)
	if !slices.Equal(got, []string{cut + CutSuffix}) {
		t.Fatalf("cut %v, want only %s", got, cut+CutSuffix)
	}
	for _, p := range []string{cut + CutSuffix, whole, live} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
