package pcapng

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
)

// udpPacket returns an IPv4/UDP packet 10.0.0.1:1000 -> 10.0.0.2:2000 with payload.
func udpPacket(payload string) []byte {
	n := 28 + len(payload)
	b := []byte{0x45, 0, byte(n >> 8), byte(n), 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(b[10:], ^uint16(sum))
	b = binary.BigEndian.AppendUint16(b, 1000)
	b = binary.BigEndian.AppendUint16(b, 2000)
	b = binary.BigEndian.AppendUint16(b, uint16(8+len(payload)))
	b = binary.BigEndian.AppendUint16(b, 0)
	return append(b, payload...)
}

var testIfaces = []Interface{{Name: "down", Description: "towards the client"}, {Name: "up", SnapLen: 65535}}

// writeTestFile writes a section with a key log and three packets (odd lengths to test padding).
func writeTestFile(t *testing.T) ([]byte, []Packet) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "pltlab test", testIfaces)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteSecrets(SecretsTLSKeyLog, []byte("CLIENT_RANDOM 00 11\n")); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.UTC)
	pkts := []Packet{
		{Interface: 0, Time: t0, Data: udpPacket("a"), Flags: FlagInbound, Comment: "entered 1.5 ms earlier"},
		{Interface: 1, Time: t0.Add(time.Microsecond), Data: udpPacket("hello"), Flags: FlagOutbound},
		{Interface: 0, Time: t0.Add(time.Second), Data: udpPacket("xyz")[:20], OrigLen: 31, Comment: "dropped: random loss"},
	}
	for _, p := range pkts {
		if err := w.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WritePacket(Packet{Interface: 2}); err == nil {
		t.Error("a packet on an undeclared interface was accepted")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), pkts
}

func TestRoundTrip(t *testing.T) {
	b, pkts := writeTestFile(t)
	f, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if f.Application != "pltlab test" || len(f.Interfaces) != 2 || f.Interfaces[0].Name != "down" ||
		f.Interfaces[0].Description != "towards the client" || f.Interfaces[0].LinkType != LinkTypeRaw || f.Interfaces[1].SnapLen != 65535 {
		t.Errorf("header: %+v", f)
	}
	if len(f.Secrets) != 1 || f.Secrets[0].Type != SecretsTLSKeyLog || string(f.Secrets[0].Data) != "CLIENT_RANDOM 00 11\n" {
		t.Errorf("secrets: %+v", f.Secrets)
	}
	if len(f.Packets) != len(pkts) {
		t.Fatalf("%d packets, want %d", len(f.Packets), len(pkts))
	}
	for i, p := range f.Packets {
		w := pkts[i]
		if w.OrigLen == 0 {
			w.OrigLen = len(w.Data)
		}
		if p.Interface != w.Interface || !p.Time.Equal(w.Time) || !bytes.Equal(p.Data, w.Data) ||
			p.OrigLen != w.OrigLen || p.Flags != w.Flags || p.Comment != w.Comment {
			t.Errorf("packet %d:\n got %+v\nwant %+v", i, p, w)
		}
	}
}

func TestReadRejects(t *testing.T) {
	b, _ := writeTestFile(t)
	for name, bad := range map[string][]byte{
		"truncated":       b[:len(b)-3],
		"bad trailer":     append(append([]byte{}, b[:len(b)-1]...), 0xff),
		"big-endian":      append([]byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x1a, 0x2b, 0x3c, 0x4d}, b[12:]...),
		"odd block size ": {0x0a, 0x0d, 0x0d, 0x0a, 13, 0, 0, 0},
	} {
		if _, err := Read(bytes.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestTshark reads the file with tshark (Wireshark 4.0, Debian package tshark): interfaces,
// comments, the DSB and the UDP payloads must come out. Skipped when tshark is not installed,
// and failed then under CI (testenv.Require): CI must read our captures with Wireshark's parser.
func TestTshark(t *testing.T) {
	testenv.Require(t, "tshark")
	tshark, _ := exec.LookPath("tshark")
	b, _ := writeTestFile(t)
	path := filepath.Join(t.TempDir(), "t.pcapng")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "frame.interface_name", "-e", "frame.comment", "-e", "udp.dstport", "-e", "frame.len", "-e", "frame.cap_len").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "Running as user") {
			lines = append(lines, l)
		}
	}
	want := []string{"down|entered 1.5 ms earlier|2000|29|29", "up||2000|33|33", "down|dropped: random loss||31|20"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("tshark read\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
