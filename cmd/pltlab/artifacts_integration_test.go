package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/pltlab/pltlab/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// TestIntegrationArtifacts runs one load per protocol through an emulated link with every
// artifact and checks each record's files: a HAR with one entry per fetch, a qlog per QUIC
// connection (JSON-SEQ), a complete NetLog with a load index, and a pcapng from which tshark
// alone (no key file: the secrets are in the file) decodes the HTTP/1.1 responses, the HTTP/2
// HEADERS frames and the HTTP/3 HEADERS frames in QUIC STREAM frames. Then --artifacts-for
// invalid keeps nothing of valid loads.
func TestIntegrationArtifacts(t *testing.T) {
	needRootAndChromium(t)
	tshark, terr := exec.LookPath("tshark")
	if terr != nil && testenv.InCI() {
		testenv.Require(t, "tshark")
	}
	dir := t.TempDir()
	art := filepath.Join(dir, "art")
	jsonl := filepath.Join(dir, "r.jsonl")
	code, out, errOut := runCLI(t, "run", "--page", "4x20KB", "--link", "rate=10mbit,rtt=20ms", "--runs", "1",
		"--warmup", "0", "--no-link-check", "--name", "arts", "--out", jsonl, "--artifacts", art)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	seen := 0
	for _, r := range readAll(t, jsonl) {
		if !r.IsLoad() {
			continue
		}
		seen++
		t.Run(r.Protocol, func(t *testing.T) { checkArtifacts(t, art, r, tshark) })
	}
	if seen != len(protocol.Table) {
		t.Errorf("%d loads, want %d", seen, len(protocol.Table))
	}

	jsonl2 := filepath.Join(dir, "r2.jsonl")
	code, out, errOut = runCLI(t, "run", "--page", "4x20KB", "--link", "rate=10mbit,rtt=20ms", "--runs", "1",
		"--warmup", "0", "--no-link-check", "--protocols", "h2", "--name", "inv", "--out", jsonl2,
		"--artifacts", art, "--artifacts-for", "invalid")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, r := range readAll(t, jsonl2) {
		if r.IsLoad() && r.Valid && hasLoadFiles(r.Artifacts) {
			t.Errorf("valid load kept %v with --artifacts-for invalid", r.Artifacts)
		}
	}
	if _, err := os.Stat(filepath.Join(art, "inv", "run-0000")); !os.IsNotExist(err) {
		t.Errorf("the valid load's folder is still there: %v", err)
	}
}

func hasLoadFiles(files []string) bool {
	for _, f := range files {
		if strings.Contains(f, "/run-") {
			return true
		}
	}
	return false
}

// checkArtifacts checks the files listed by one record.
func checkArtifacts(t *testing.T, root string, r *result.Record, tshark string) {
	p := protocol.MustLookup(r.Protocol)
	files := map[string]string{}
	for _, f := range r.Artifacts {
		path := filepath.Join(root, filepath.FromSlash(f))
		if _, err := os.Stat(path); err != nil {
			t.Errorf("listed file %s: %v", f, err)
		}
		switch {
		case strings.HasSuffix(f, ".har"):
			files["har"] = path
		case strings.HasSuffix(f, ".pcapng"):
			files["pcap"] = path
		case strings.HasSuffix(f, ".sqlog"):
			files["qlog"] = path
		case strings.HasSuffix(f, ".loads.jsonl"):
			files["index"] = path
		case strings.HasSuffix(f, ".json"):
			files["netlog"] = path
		}
	}
	want := []string{"har", "pcap", "netlog", "index"}
	if p.Transport == protocol.QUIC {
		want = append(want, "qlog")
	}
	for _, k := range want {
		if files[k] == "" {
			t.Errorf("no %s among %v", k, r.Artifacts)
		}
	}
	if b, err := os.ReadFile(files["har"]); err != nil || !json.Valid(b) || !bytes.Contains(b, []byte(`"httpVersion": "`+p.NextHop+`"`)) {
		t.Errorf("HAR: %v; valid JSON %v, with httpVersion %s", err, json.Valid(b), p.NextHop)
	}
	if q := files["qlog"]; q != "" {
		if b, err := os.ReadFile(q); err != nil || len(b) == 0 || b[0] != 0x1e {
			t.Errorf("qlog %s: %v, %d bytes, want JSON-SEQ (RS first)", q, err, len(b))
		}
	}
	if tshark == "" {
		t.Log("tshark not installed: pcapng not decoded")
		return
	}
	filter := map[protocol.Version]string{protocol.HTTP1: "http.response.code == 200 && http.content_length == 20000", protocol.HTTP2: "http2.type == 1",
		protocol.HTTP3: "http3.frame_type == 1 && quic.stream.stream_id"}[p.Version]
	// Reassembling out-of-order segments (off by default in tshark 4.0) is needed across a loss.
	// The server listens on a port the kernel picks; a few such ports are in tshark's own port
	// table (44818 enip, 57000 irc, ...), which then wins over the TLS heuristic and decodes
	// nothing: the server's port is named as TLS (QUIC) so the check does not depend on the draw.
	args := []string{"-o", "tcp.reassemble_out_of_order:TRUE", "-r", files["pcap"]}
	if port := serverPort(t, tshark, files["pcap"], p.Transport == protocol.QUIC); port != "" {
		if p.Transport == protocol.QUIC {
			args = append(args, "-d", "udp.port=="+port+",quic")
		} else {
			args = append(args, "-d", "tcp.port=="+port+",tls")
		}
	}
	got, err := exec.Command(tshark, append(args, "-Y", filter)...).Output()
	if n := bytes.Count(got, []byte("\n")); err != nil || n < r.Page.Objects {
		t.Errorf("tshark %q -Y %q: %v, %d packets, want >= %d (one per object)\n%s", args, filter, err, n, r.Page.Objects,
			pcapSummary(tshark, files["pcap"]))
	} else {
		t.Logf("%s: tshark decoded %d packets with %s", r.Protocol, n, filter)
	}
}

// serverPort is the server's port in the capture pcap: the destination port of the first TCP
// SYN, or of the first QUIC Initial from the client (quic); "" when there is none.
func serverPort(t *testing.T, tshark, pcap string, quic bool) string {
	filter, field := "tcp.flags.syn == 1 && tcp.flags.ack == 0", "tcp.dstport"
	if quic {
		filter, field = "udp", "udp.dstport"
	}
	out, err := exec.Command(tshark, "-r", pcap, "-c", "1", "-Y", filter, "-T", "fields", "-e", field).Output()
	if err != nil {
		t.Logf("server port in %s: %v", pcap, err)
	}
	return strings.TrimSpace(string(out))
}

// pcapSummary is what a failed decode needs to be told apart: the conversations, the TLS
// handshake messages tshark saw, and the key log lines embedded in the file.
func pcapSummary(tshark, pcap string) string {
	var b strings.Builder
	for _, args := range [][]string{
		{"-q", "-z", "conv,tcp", "-z", "conv,udp"},
		{"-Y", "tls.handshake || quic.long.packet_type", "-T", "fields", "-e", "frame.number", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tls.handshake.type", "-e", "quic.long.packet_type"},
	} {
		out, err := exec.Command(tshark, append([]string{"-r", pcap}, args...)...).CombinedOutput()
		fmt.Fprintf(&b, "tshark %q: %v\n%s\n", args, err, out)
	}
	raw, err := os.ReadFile(pcap)
	fmt.Fprintf(&b, "%d bytes, %v; key log lines embedded: %d\n", len(raw), err, bytes.Count(raw, []byte("TRAFFIC_SECRET_0 ")))
	return b.String()
}

// TestIntegrationFlowsArtifacts runs an h2 and an h3 flow with --artifacts: both records list
// the run's pcapng and qlog, and tshark decodes HTTP/2 and HTTP/3 HEADERS frames from the
// pcapng alone.
func TestIntegrationFlowsArtifacts(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root; skipped with -short")
	}
	tshark, _ := exec.LookPath("tshark")
	dir := t.TempDir()
	art, jsonl := filepath.Join(dir, "art"), filepath.Join(dir, "f.jsonl")
	code, out, errOut := runCLI(t, "flows", "--link", "rate=10mbit,rtt=20ms", "--flow", "h3", "--flow", "h2:cubic",
		"--duration", "2s", "--name", "fl", "--out", jsonl, "--artifacts", art)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var recs []*result.Record
	for _, r := range readAll(t, jsonl) {
		if r.IsFlow() {
			recs = append(recs, r)
		}
	}
	if len(recs) != 2 {
		t.Fatalf("%d flow records, want 2", len(recs))
	}
	var pcap string
	for _, r := range recs {
		var kinds []string
		for _, f := range r.Artifacts {
			kinds = append(kinds, filepath.Ext(f))
			if strings.HasSuffix(f, ".pcapng") {
				pcap = filepath.Join(art, f)
			}
		}
		if strings.Join(kinds, " ") != ".sqlog .pcapng" {
			t.Errorf("flow %s lists %v, want a qlog and the pcapng", r.Protocol, r.Artifacts)
		}
	}
	if tshark == "" || pcap == "" {
		return
	}
	for _, filter := range []string{"http2.type == 1", "http3.frame_type == 1"} {
		args := []string{"-r", pcap} // the servers' ports named, as in checkArtifacts
		if port := serverPort(t, tshark, pcap, false); port != "" {
			args = append(args, "-d", "tcp.port=="+port+",tls")
		}
		if port := serverPort(t, tshark, pcap, true); port != "" {
			args = append(args, "-d", "udp.port=="+port+",quic")
		}
		got, err := exec.Command(tshark, append(args, "-Y", filter)...).Output()
		if err != nil || bytes.Count(got, []byte("\n")) == 0 {
			t.Errorf("tshark %q -Y %q: %v, nothing decoded\n%s", args, filter, err, pcapSummary(tshark, pcap))
		}
	}
}

// TestIntegrationArtifactsRedoneLoad makes the folder a killed process leaves for a load it
// never finished (a stale qlog, a NetLog of another process), then runs that load: the record
// lists only the new load's files, in a new folder of its own (the earlier attempt's untouched),
// and the NetLog is this process's own (named with its pid), so no index points into a file
// another process wrote.
// About 5 s.
func TestIntegrationArtifactsRedoneLoad(t *testing.T) {
	needRootAndChromium(t)
	dir := t.TempDir()
	art, jsonl := filepath.Join(dir, "art"), filepath.Join(dir, "r.jsonl")
	stale := filepath.Join(art, "redo", "run-0000")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(stale, "h3-server-old.sqlog"), filepath.Join(art, "redo", "netlog-h2-1.json")} {
		if err := os.WriteFile(f, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, "run", "--page", "2x10KB", "--link", "none", "--runs", "1", "--warmup", "0",
		"--protocols", "h2", "--name", "redo", "--out", jsonl, "--artifacts", art, "--artifacts-kinds", "har,netlog")
	if code != 0 || !strings.Contains(errOut, "taken by an earlier attempt") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var load *result.Record
	for _, r := range readAll(t, jsonl) {
		if r.IsLoad() {
			load = r
		}
	}
	pid := "-" + strconv.Itoa(os.Getpid()) + "-"
	if load == nil || len(load.ArtifactsFailed) != 0 {
		t.Fatalf("load %+v", load)
	}
	want := []string{"redo/netlog-h2" + pid + "1.json", "redo/netlog-h2" + pid + "1.json.loads.jsonl", "redo/run-0000.2/load.har"}
	if strings.Join(load.Artifacts, " ") != strings.Join(want, " ") {
		t.Fatalf("artifacts %v, want %v", load.Artifacts, want)
	}
	if _, err := os.Stat(filepath.Join(stale, "h3-server-old.sqlog")); err != nil {
		t.Fatalf("the earlier attempt's qlog was touched: %v", err)
	}
}

// TestIntegrationRunArtifactsFullDisk runs three loads with every artifact into a 300 KB tmpfs
// (a load's files need about 1 MB): no record lists a file that is not whole, those that are not
// are in artifacts_failed, the closing line counts them and the exit code is 3. About 8 s.
func TestIntegrationRunArtifactsFullDisk(t *testing.T) {
	needRootAndChromium(t)
	art := mountTmpfs(t, "300k", "")
	jsonl := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, errOut := runCLI(t, "run", "--page", "4x20KB", "--link", "rate=10mbit,rtt=20ms", "--runs", "1",
		"--warmup", "0", "--no-link-check", "--name", "full", "--out", jsonl, "--artifacts", art)
	if code != exitArtifacts || !strings.Contains(errOut, "artifacts not written whole") {
		t.Fatalf("exit %d (want %d)\nstderr:\n%s", code, exitArtifacts, errOut)
	}
	loads, failed := 0, 0
	for _, r := range readAll(t, jsonl) {
		if !r.IsLoad() {
			continue
		}
		loads++
		failed += len(r.ArtifactsFailed)
		for _, f := range r.Artifacts {
			st, err := os.Stat(filepath.Join(art, filepath.FromSlash(f)))
			if err != nil || st.Size() == 0 {
				t.Errorf("%s lists %s: %v", r.Protocol, f, err)
			}
		}
		for _, f := range r.ArtifactsFailed {
			if f.Error == "" || strings.Contains(strings.Join(r.Artifacts, " "), f.Path) {
				t.Errorf("%s: failed %+v without an error, or also listed as evidence", r.Protocol, f)
			}
		}
	}
	if loads != len(protocol.Table) || failed == 0 {
		t.Fatalf("%d loads, %d failed artifacts: want %d loads and failures", loads, failed, len(protocol.Table))
	}
	code, out, _ := runCLI(t, "report", jsonl)
	if code != 0 || !strings.Contains(out, "artifacts not written whole") {
		t.Fatalf("report: exit %d, no count of failed artifacts:\n%s", code, out)
	}
}
