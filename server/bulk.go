package server

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/pltlab/pltlab/protocol"
)

// Bulk objects for flows (package flows): GET BulkPath serves incompressible bytes.
//
// Query parameters:
//   - bytes=N: the body is exactly N bytes (with Content-Length); absent or 0: endless, until
//     the client closes the stream or the connection;
//   - cc=NAME: the TCP congestion control set on this request's connection before the body is
//     sent (setsockopt TCP_CONGESTION on the accepted socket, which Linux allows on an
//     established connection; it applies to the whole connection, so a flow is one connection).
//     On h3 only "" and QUICCCName are accepted: quic-go has no other controller.
//
// Response headers: HeaderConnID (the registry's ConnInfo.ID of the connection, so a client can
// look its server-side facts up with ConnStats) and HeaderCC (the congestion control read back
// from the socket, or QUICCCName on h3). POST BulkPath is a sink: it reads and discards the
// request body (an upload flow) and answers with the byte count.
const (
	// BulkPath is the URL path of bulk objects.
	BulkPath = "/_pltlab/bulk"
	// HeaderConnID carries the server's connection ID (ConnInfo.ID) on bulk responses.
	HeaderConnID = "X-Pltlab-Conn"
	// HeaderCC carries the connection's congestion control on bulk responses.
	HeaderCC = "X-Pltlab-CC"
	// QUICCCName is the short name of quic-go's only congestion controller (see
	// QUICCongestionControl): NewReno with HyStart and pacing.
	QUICCCName = "newreno"
	// bulkChunk is the size of the one pseudo-random buffer every bulk body is written from,
	// in bytes: written again and again, never allocated per request.
	bulkChunk = 256 << 10
	// bulkSeed seeds the bulk buffer (ChaCha8), so bodies are the same in every run.
	bulkSeed = 0x62756c6b
)

// newBulkData returns bulkChunk bytes of ChaCha8 output: incompressible, deterministic.
func newBulkData() []byte {
	b := make([]byte, bulkChunk)
	var seed [32]byte
	copy(seed[:], strconv.Itoa(bulkSeed))
	_, _ = rand.NewChaCha8(seed).Read(b)
	return b
}

// serveBulk serves GET BulkPath (see the constants' comment).
func (s *Server) serveBulk(c *gin.Context) {
	n, err := strconv.ParseInt(c.DefaultQuery("bytes", "0"), 10, 64)
	if err != nil || n < 0 {
		c.String(http.StatusBadRequest, "bad bytes %q: accepted a byte count >= 0 (0 = endless)\n", c.Query("bytes"))
		return
	}
	e := entryFrom(c.Request.Context())
	cc, err := s.reg.setConnCC(e, c.Query("cc"))
	if err != nil {
		c.String(http.StatusBadRequest, "%v\n", err)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Cache-Control", "no-store")
	if e != nil {
		h.Set(HeaderConnID, strconv.FormatUint(e.info.ID, 10))
	}
	h.Set(HeaderCC, cc)
	if n > 0 {
		h.Set("Content-Length", strconv.FormatInt(n, 10))
	}
	c.Status(http.StatusOK)
	c.Writer.WriteHeaderNow()
	s.writeBulk(c, n)
}

// writeBulk writes n bytes (n == 0: until the client goes away) from the shared buffer.
func (s *Server) writeBulk(c *gin.Context, n int64) {
	done := c.Request.Context().Done()
	for sent := int64(0); n == 0 || sent < n; {
		b := s.bulk
		if n > 0 {
			b = b[:min(int64(len(b)), n-sent)]
		}
		w, err := c.Writer.Write(b)
		sent += int64(w)
		if err != nil {
			return
		}
		select {
		case <-done:
			return
		default:
		}
	}
}

// serveBulkSink reads and discards a POST body (an upload flow) and answers with its length.
func (s *Server) serveBulkSink(c *gin.Context) {
	e := entryFrom(c.Request.Context())
	cc, err := s.reg.setConnCC(e, c.Query("cc"))
	if err != nil {
		c.String(http.StatusBadRequest, "%v\n", err)
		return
	}
	buf := make([]byte, 64<<10)
	var total int64
	for {
		n, err := c.Request.Body.Read(buf)
		total += int64(n)
		if err != nil {
			break
		}
	}
	if e != nil {
		c.Header(HeaderConnID, strconv.FormatUint(e.info.ID, 10))
	}
	c.Header(HeaderCC, cc)
	s.write(c, "text/plain; charset=utf-8", []byte(strconv.FormatInt(total, 10)+"\n"))
}

// setConnCC sets the congestion control of e's TCP socket to cc ("" keeps it) and returns the
// algorithm read back; on a QUIC connection it returns QUICCCName and refuses any other name.
func (r *registry) setConnCC(e *connEntry, cc string) (string, error) {
	if e == nil {
		return "", nil
	}
	r.mu.Lock()
	tc, quic := e.tcp, e.quic != nil
	r.mu.Unlock()
	if quic || tc == nil {
		if cc != "" && cc != QUICCCName {
			return "", fmt.Errorf("bad cc %q on QUIC: quic-go runs only %s", cc, QUICCCName)
		}
		return QUICCCName, nil
	}
	rc, err := rawConn(tc.Conn)
	if err != nil {
		return "", err
	}
	if cc != "" {
		if len(cc) >= 16 || strings.ContainsAny(cc, " \t\n/") {
			return "", fmt.Errorf("bad cc %q: accepted a kernel algorithm name such as cubic, bbr, reno", cc)
		}
		if err := setTCPCC(rc, cc); err != nil {
			return "", fmt.Errorf("set connection congestion control: %w", err)
		}
	}
	got, err := getTCPCC(rc)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	e.info.TCPCC = got
	r.mu.Unlock()
	return got, nil
}

// isQUIC reports whether the named protocol (a protocol.Table name) runs over QUIC.
func isQUIC(name string) bool {
	p, err := protocol.Lookup(name)
	return err == nil && p.Transport == protocol.QUIC
}

// rawConn returns the syscall.RawConn of c.
func rawConn(c net.Conn) (syscall.RawConn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("connection %T has no socket", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("raw socket: %w", err)
	}
	return rc, nil
}

// tcpStats are the TCP_INFO fields ConnStats reports.
type tcpStats struct {
	segsOut, retrans                       int64
	srtt, busy, rwndLimited, sndbufLimited time.Duration
}

// ConnStats are the sender-side transport facts of one connection, for flows.
type ConnStats struct {
	// ConnInfo is the connection as the registry knows it (CC, ALPN, bytes sent...).
	ConnInfo
	// CC is the congestion control: the socket's TCP_CONGESTION for TCP, QUICCCName for QUIC.
	CC string `json:"cc"`
	// SegmentsOut counts the data segments (TCP: tcpi_data_segs_out) or packets (QUIC:
	// ConnectionStats.PacketsSent) the server sent, retransmissions included.
	SegmentsOut int64 `json:"segments_out"`
	// Retransmits counts TCP segments retransmitted (tcpi_total_retrans), or QUIC packets
	// declared lost (ConnectionStats.PacketsLost): the sender's view of loss.
	Retransmits int64 `json:"retransmits"`
	// SRTT is the sender's smoothed RTT (tcpi_rtt; QUIC SmoothedRTT); 0 when unknown.
	SRTT time.Duration `json:"srtt_ns"`
	// Busy is how long the TCP sender had data to send (tcpi_busy_time); RwndLimited and
	// SndbufLimited the parts of it limited by the peer's receive window and by the send buffer
	// (the application not writing fast enough shows as neither: busy time ends). 0 for QUIC.
	Busy          time.Duration `json:"busy_ns"`
	RwndLimited   time.Duration `json:"rwnd_limited_ns"`
	SndbufLimited time.Duration `json:"sndbuf_limited_ns"`
	// Open is false once the connection closed; SegmentsOut, Retransmits and SRTT are then 0
	// (read them before closing).
	Open bool `json:"open"`
}

// ConnStats returns the sender-side facts of the connection with ConnInfo.ID id; false when the
// server does not know it (never accepted, or forgotten).
func (s *Server) ConnStats(id uint64) (ConnStats, bool) {
	s.reg.mu.Lock()
	var e *connEntry
	for _, x := range s.reg.all {
		if x.info.ID == id {
			e = x
			break
		}
	}
	if e == nil {
		s.reg.mu.Unlock()
		return ConnStats{}, false
	}
	st := ConnStats{ConnInfo: s.reg.snapshot(e)}
	tc, qc := e.tcp, e.quic
	s.reg.mu.Unlock()
	switch {
	case qc != nil:
		qs := qc.ConnectionStats()
		st.CC, st.Open = QUICCCName, true
		st.SegmentsOut, st.Retransmits, st.SRTT = int64(qs.PacketsSent), int64(qs.PacketsLost), qs.SmoothedRTT
	case tc != nil:
		st.CC, st.Open = st.TCPCC, true
		if rc, err := rawConn(tc.Conn); err == nil {
			if ti, err := tcpInfo(rc); err == nil {
				st.SegmentsOut, st.Retransmits, st.SRTT = ti.segsOut, ti.retrans, ti.srtt
				st.Busy, st.RwndLimited, st.SndbufLimited = ti.busy, ti.rwndLimited, ti.sndbufLimited
			}
		}
	case isQUIC(st.Protocol):
		st.CC = QUICCCName
	default:
		st.CC = st.TCPCC
	}
	return st, true
}
