//go:build linux

package server

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ngtcp2Stack is the set of gtlsserver processes serving h3 for a Server, one per site.
type ngtcp2Stack struct {
	cc      string
	certLen int // the certificate's DER length: a full handshake sends at least this much
	tmp     string
	sites   []*ngtcp2Site
	version string
	log     func(msg string, args ...any)

	mu    sync.Mutex
	conns []ConnInfo // every connection read so far (the newest maxClosedConns), oldest first
	next  uint64     // ConnInfo.ID of the next connection (from ngtcp2IDBase)
}

// ngtcp2IDBase numbers ngtcp2 connections apart from the registry's (which count from 1).
const ngtcp2IDBase = 1 << 32

// ngtcp2Site is one gtlsserver process and the site it serves.
type ngtcp2Site struct {
	host string
	dir  string // the page directory served (--htdocs)
	addr string // ip:port it listens on
	qlog string // its qlog directory
	cmd  *exec.Cmd
	out  *limitedBuffer // its standard output and error (the first 64 KiB)
	done chan struct{}  // closed when the process has exited
}

// limitedBuffer keeps the first 64 KiB written to it.
type limitedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 64<<10 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startNgtcp2 closes the shared UDP socket bind reserved and starts one gtlsserver per site:
// the first on that port, every other on a free UDP port of the same address. It returns once
// every process has bound its socket; on error none is left running.
func (s *Server) startNgtcp2() error {
	if err := CheckNgtcp2(); err != nil {
		return err
	}
	for _, info := range s.info.Sites {
		if s.sites[info.Host].dir == "" {
			return fmt.Errorf("%w: the ngtcp2 stack serves page directories only (no bulk bodies, no empty page)", ErrBadOption)
		}
	}
	shared := s.udp.LocalAddr().(*net.UDPAddr)
	_ = s.udp.Close() // gtlsserver binds its own socket: hand the port over
	s.udp = nil
	st := &ngtcp2Stack{cc: s.cfg.quicCC, certLen: len(s.cert.leaf.Raw), next: ngtcp2IDBase,
		log: func(msg string, args ...any) { s.log.Debug(msg, args...) }}
	cleanStaleNgtcp2Dirs()
	tmp, err := os.MkdirTemp("", fmt.Sprintf("pltlab-ngtcp2-%d-", os.Getpid()))
	if err != nil {
		return fmt.Errorf("ngtcp2: temporary directory: %w", err)
	}
	st.tmp = tmp
	keyPath, certPath := filepath.Join(tmp, "key.pem"), filepath.Join(tmp, "cert.pem")
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: s.cert.keyDER}), 0o600); err != nil {
		st.close()
		return fmt.Errorf("ngtcp2: write the key: %w", err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.cert.leaf.Raw}), 0o644); err != nil {
		st.close()
		return fmt.Errorf("ngtcp2: write the certificate: %w", err)
	}
	for i, info := range s.info.Sites {
		port := shared.Port
		if i > 0 {
			if port, err = freeUDPPort(shared.IP); err != nil {
				st.close()
				return err
			}
		}
		site := &ngtcp2Site{host: info.Host, dir: s.sites[info.Host].dir, addr: net.JoinHostPort(shared.IP.String(), strconv.Itoa(port)),
			qlog: filepath.Join(tmp, fmt.Sprintf("qlog-%d", i))}
		if err := st.start(site, keyPath, certPath); err != nil {
			st.close()
			return err
		}
		st.sites = append(st.sites, site)
		if i > 0 {
			s.info.Sites[i].Addrs = map[string]string{s.quicP.Name: site.addr}
		}
	}
	st.version = ngtcp2Version(st.sites[0].cmd.Process.Pid)
	cc, err := ngtcp2CCOf(st.sites[0].cmd.Process.Pid)
	if err != nil {
		st.close()
		return err
	}
	st.cc = cc
	s.info.H3Stack = StackNgtcp2
	s.info.QUICCC = "ngtcp2 " + st.version + " " + cc
	s.info.QUICStack = "ngtcp2 " + st.version
	s.info.ZeroRTT = true
	s.ng = st
	return nil
}

// freeUDPPort returns a UDP port of ip that is free now.
func freeUDPPort(ip net.IP) (int, error) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		return 0, fmt.Errorf("ngtcp2: find a free UDP port on %s: %w", ip, err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	return port, c.Close()
}

// start runs gtlsserver for site and waits until it has bound its UDP port (at most 5 s). The
// process dies with this one (Pdeathsig), so a killed pltlab leaves none behind.
func (st *ngtcp2Stack) start(site *ngtcp2Site, keyPath, certPath string) error {
	if err := os.MkdirAll(site.qlog, 0o755); err != nil {
		return fmt.Errorf("ngtcp2: qlog directory: %w", err)
	}
	host, port, _ := net.SplitHostPort(site.addr)
	out := &limitedBuffer{}
	cmd := exec.Command(Ngtcp2Binary, "-q", "--htdocs="+site.dir, "--qlog-dir="+site.qlog, "--cc="+st.cc,
		"--timeout="+strconv.Itoa(int(Ngtcp2IdleTimeout/time.Millisecond))+"ms", host, port, keyPath, certPath)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("ngtcp2: start %s: %w", Ngtcp2Binary, err)
	}
	site.cmd, site.out, site.done = cmd, out, make(chan struct{})
	go func() { _ = cmd.Wait(); close(site.done) }()
	p, _ := strconv.Atoi(port)
	deadline := time.Now().Add(5 * time.Second)
	for {
		select {
		case <-site.done:
			return fmt.Errorf("ngtcp2: %s on %s exited at start: %s", Ngtcp2Binary, site.addr, strings.TrimSpace(out.String()))
		default:
		}
		if udpBound(cmd.Process.Pid, p) {
			st.log("ngtcp2 server up", "site", site.host, "addr", site.addr, "pid", cmd.Process.Pid, "cc", st.cc)
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-site.done
			return fmt.Errorf("ngtcp2: %s did not bind %s within 5 s: %s", Ngtcp2Binary, site.addr, strings.TrimSpace(out.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// udpBound reports whether process pid holds a UDP socket bound to port (from /proc/PID/net/udp
// and /proc/PID/fd).
func udpBound(pid, port int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/udp", pid))
	if err != nil {
		return false
	}
	want := fmt.Sprintf(":%04X", port)
	var inodes []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], want) {
			inodes = append(inodes, "socket:["+f[9]+"]")
		}
	}
	if len(inodes) == 0 {
		return false
	}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && slices.Contains(inodes, l) {
			return true
		}
	}
	return false
}

// ngtcp2CCOf reads the congestion controller gtlsserver process pid runs from its own command
// line (/proc/PID/cmdline): the qlog of ngtcp2 0.12 does not name it. No --cc means its default.
func ngtcp2CCOf(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "", fmt.Errorf("ngtcp2: read the server's command line: %w", err)
	}
	for _, a := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(a, "--cc="); ok {
			return v, nil
		}
	}
	return DefaultNgtcp2CC, nil
}

// ngtcp2Version names the libraries the running gtlsserver pid mapped (/proc/PID/maps): the
// Debian package version of libngtcp2 when dpkg knows the file, then the library file names,
// e.g. "0.12.1+dfsg-1+deb12u1 (libngtcp2.so.9.0.1, libnghttp3.so.3.0.2, libgnutls.so.30.34.3)".
func ngtcp2Version(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	var libs []string
	pkgVersion := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		path := f[len(f)-1]
		base := filepath.Base(path)
		for _, lib := range []string{"libngtcp2.so", "libnghttp3.so", "libgnutls.so"} {
			if strings.HasPrefix(base, lib) && !slices.Contains(libs, base) {
				libs = append(libs, base)
				if lib == "libngtcp2.so" {
					pkgVersion = dpkgVersionOf(path)
				}
			}
		}
	}
	v := strings.Join(libs, ", ")
	if v == "" {
		v = "(libraries not readable)"
	}
	if pkgVersion != "" {
		return pkgVersion + " (" + v + ")"
	}
	return v
}

// dpkgVersionOf returns the version of the Debian package that installed path, "" when dpkg
// does not know it.
func dpkgVersionOf(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	out, err := exec.Command("dpkg-query", "-S", real).Output()
	if err != nil {
		return ""
	}
	pkg, _, ok := strings.Cut(strings.TrimSpace(string(out)), ":")
	if !ok {
		return ""
	}
	v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(v))
}

// openQlogs returns the qlog files some site's process holds open (connections not yet over).
func (st *ngtcp2Stack) openQlogs() []string {
	var open []string
	for _, site := range st.sites {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", site.cmd.Process.Pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, site.qlog+string(filepath.Separator)) {
				open = append(open, l)
			}
		}
	}
	return open
}

// waitClosed waits until no site's process holds a qlog open, that is until every connection
// has idled out, or fails after ngtcp2CloseWait naming the connections still open.
func (st *ngtcp2Stack) waitClosed() error {
	deadline := time.Now().Add(ngtcp2CloseWait)
	for {
		open := st.openQlogs()
		if len(open) == 0 {
			return nil
		}
		if err := st.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ngtcp2: %d connection(s) still open %v after their last packet should have idled them out (%s)",
				len(open), ngtcp2CloseWait, strings.Join(open, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exited returns an error when some site's process has exited.
func (st *ngtcp2Stack) exited() error {
	for _, site := range st.sites {
		select {
		case <-site.done:
			return fmt.Errorf("ngtcp2: the server of %s (%s) exited: %s", site.host, site.addr, strings.TrimSpace(site.outString()))
		default:
		}
	}
	return nil
}

func (site *ngtcp2Site) outString() string {
	if site.out == nil {
		return ""
	}
	return site.out.String()
}

// closeConnections waits until every connection has idled out: ngtcp2's example server cannot
// close one on request.
func (st *ngtcp2Stack) closeConnections() error {
	return st.waitClosed()
}

// fsClockSlack is how far a file's birth time may lag the clock it is compared with: the kernel
// stamps files from its coarse clock, one tick (up to 4 ms at HZ=250) behind; measured here
// 3.7-5.5 ms behind time.Now on ext4. A connection opened that little before since counts as
// opened since; the connection before the page's closed at least Ngtcp2IdleTimeout earlier.
const fsClockSlack = 20 * time.Millisecond

// pageConn waits until every connection has idled out, reads the qlogs not read yet (then
// removes them) and returns the connection opened last at or after since (the page's, as
// Server.PageConn); false when none was opened since.
func (st *ngtcp2Stack) pageConn(since time.Time) (ConnInfo, bool, error) {
	if err := st.waitClosed(); err != nil {
		return ConnInfo{}, false, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, site := range st.sites {
		names, _ := filepath.Glob(filepath.Join(site.qlog, "*.sqlog"))
		for _, n := range names {
			ci, err := st.parse(n)
			if err != nil {
				st.log("ngtcp2 qlog unreadable", "file", n, "err", err)
			} else {
				st.conns = append(st.conns, ci)
			}
			_ = os.Remove(n)
		}
	}
	if len(st.conns) > maxClosedConns {
		st.conns = slices.Delete(st.conns, 0, len(st.conns)-maxClosedConns)
	}
	var best ConnInfo
	found := false
	for _, ci := range st.conns {
		if !ci.Opened.Before(since.Add(-fsClockSlack)) && (!found || ci.Opened.After(best.Opened)) {
			best, found = ci, true
		}
	}
	return best, found, nil
}

// allConns returns every ngtcp2 connection read so far, oldest first.
func (st *ngtcp2Stack) allConns() []ConnInfo {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.conns)
}

// parse reads one connection's qlog (ngtcp2 0.12: qlog 0.3, JSON-SEQ) into a ConnInfo:
//   - BytesSent sums the raw length of every packet sent (QUIC packets with retransmissions, no
//     UDP/IP headers, as quic-go's BytesSent);
//   - BodyBytes is the extent (largest offset + length) of every client-initiated bidirectional
//     stream the server sent on, summed: the HTTP/3 frames of the responses (headers, bodies);
//   - Requests counts those streams;
//   - Used0RTT is true when a 0-RTT packet was received;
//   - Resumed is true when the server's Handshake-space CRYPTO data is shorter than its
//     certificate: a full TLS 1.3 handshake sends the Certificate message there (RFC 8446
//     section 4.4.2), a resumed one does not (section 2.2);
//   - Opened is the file's birth time (the connection's first event), Closed its last write
//     (where the file system keeps no birth time, Opened is Closed less the idle timeout and the
//     qlog's last relative event time).
func (st *ngtcp2Stack) parse(path string) (ConnInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ConnInfo{}, err
	}
	type frame struct {
		Type     string `json:"frame_type"`
		StreamID *int64 `json:"stream_id"`
		Offset   int64  `json:"offset"`
		Length   int64  `json:"length"`
	}
	var ev struct {
		Time float64 `json:"time"`
		Name string  `json:"name"`
		Data struct {
			Frames []frame `json:"frames"`
			Header struct {
				Type string `json:"packet_type"`
			} `json:"header"`
			Raw struct {
				Length int64 `json:"length"`
			} `json:"raw"`
		} `json:"data"`
	}
	ci := ConnInfo{Protocol: "h3", ALPN: "h3", TLSVersion: "1.3", QUICCC: st.cc, Remote: ""}
	extent := map[int64]int64{}
	handshakeCrypto := int64(0)
	events, lastMs := 0, 0.0
	for _, rec := range bytes.Split(b, []byte{0x1e}) {
		rec = bytes.TrimSpace(rec)
		if len(rec) == 0 {
			continue
		}
		ev.Name, ev.Data.Frames, ev.Data.Header.Type, ev.Data.Raw.Length = "", nil, "", 0
		if json.Unmarshal(rec, &ev) != nil {
			continue // the header record, or a line cut by a killed server
		}
		events++
		lastMs = max(lastMs, ev.Time)
		switch ev.Name {
		case "transport:packet_sent":
			ci.BytesSent += ev.Data.Raw.Length
			for _, f := range ev.Data.Frames {
				switch {
				case f.Type == "stream" && f.StreamID != nil && *f.StreamID%4 == 0:
					extent[*f.StreamID] = max(extent[*f.StreamID], f.Offset+f.Length)
				case f.Type == "crypto" && ev.Data.Header.Type == "handshake":
					handshakeCrypto += f.Length
				}
			}
		case "transport:packet_received":
			if ev.Data.Header.Type == "0RTT" {
				ci.Used0RTT = true
			}
		}
	}
	if events == 0 {
		return ConnInfo{}, errors.New("no qlog events")
	}
	for _, n := range extent {
		ci.BodyBytes += n
	}
	ci.Requests = len(extent)
	ci.Resumed = handshakeCrypto > 0 && handshakeCrypto < int64(st.certLen)
	var sx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME|unix.STATX_MTIME, &sx) == nil {
		if sx.Mask&unix.STATX_BTIME != 0 {
			ci.Opened = time.Unix(sx.Btime.Sec, int64(sx.Btime.Nsec))
		}
		ci.Closed = time.Unix(sx.Mtime.Sec, int64(sx.Mtime.Nsec))
	}
	if ci.Opened.IsZero() { // no birth time on this file system: the qlog's own clock, from its end
		ci.Opened = ci.Closed.Add(-Ngtcp2IdleTimeout - time.Duration(lastMs*float64(time.Millisecond)))
	}
	ci.ID = st.next
	st.next++
	ci.Qlog = filepath.Base(path)
	return ci, nil
}

// close kills every site's process and removes the key, the certificate and the qlogs.
func (st *ngtcp2Stack) close() error {
	for _, site := range st.sites {
		if site.cmd != nil && site.cmd.Process != nil {
			_ = syscall.Kill(-site.cmd.Process.Pid, syscall.SIGKILL)
			<-site.done
		}
	}
	if st.tmp != "" {
		return os.RemoveAll(st.tmp)
	}
	return nil
}

// cleanStaleNgtcp2Dirs removes the temporary directories of pltlab processes that are gone
// (killed before they could remove them): they hold a throwaway key and qlogs.
func cleanStaleNgtcp2Dirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pltlab-ngtcp2-*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), "pltlab-ngtcp2-")
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			_ = os.RemoveAll(d)
		}
	}
}
