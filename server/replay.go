package server

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/pltlab/pltlab/pages"
)

// ReplayMissHeader marks a response to a request the replayed archive lacks (value "miss"):
// a 404 whose body names the request.
const ReplayMissHeader = "X-Pltlab-Replay"

// FaviconPath is the icon Chromium asks every host for by itself (not the page; DevTools HARs do
// not record it). A replayed archive without it answers 404 and does not count it as a miss.
const FaviconPath = "/favicon.ico"

// ReplayMissesListed is how many missed URLs ReplayStats lists (the first ones, in order).
const ReplayMissesListed = 5

// ReplayStats counts what a replayed archive answered since a time (Server.ReplayStats).
type ReplayStats struct {
	// Hits is the number of requests answered from the archive (exact or query-tolerant
	// matches, pages.Archive.Match); QueryMatches those of them whose query differed.
	Hits         int `json:"hits"`
	QueryMatches int `json:"query_matches,omitempty"`
	// Misses is the number of requests the archive lacks (answered 404 with ReplayMissHeader).
	Misses int `json:"misses"`
	// Missed are the first ReplayMissesListed missed requests, as "METHOD https://HOST/PATH?QUERY".
	Missed []string `json:"missed,omitempty"`
}

// replayEvent is one request a replayed archive answered (or missed).
type replayEvent struct {
	at   time.Time
	req  string
	kind pages.MatchKind
}

// replayLog holds a server's replay events.
type replayLog struct {
	mu     sync.Mutex
	events []replayEvent
}

func (l *replayLog) add(ev replayEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

// ReplayStats counts the requests a replayed archive answered and missed since since (all
// sites). A server without a replayed site gives zeros. The events before since are dropped (the
// log stays as long as one load's requests), so calls must come with non-decreasing times, as a
// runner's loads do.
func (s *Server) ReplayStats(since time.Time) ReplayStats {
	s.replay.mu.Lock()
	defer s.replay.mu.Unlock()
	s.replay.events = slices.DeleteFunc(s.replay.events, func(ev replayEvent) bool { return ev.at.Before(since) })
	var st ReplayStats
	for _, ev := range s.replay.events {
		switch ev.kind {
		case pages.MatchMiss:
			st.Misses++
			if len(st.Missed) < ReplayMissesListed {
				st.Missed = append(st.Missed, ev.req)
			}
		case pages.MatchQuery:
			st.QueryMatches++
			st.Hits++
		default:
			st.Hits++
		}
	}
	return st
}

// replayContent is the content of a site that replays archive a under hostname host: its
// manifest is a.Manifest(); requests for host are looked up as a.DocHost.
func replayContent(a *pages.Archive, host string) (*content, error) {
	for _, h := range a.Hosts {
		if len(h) > 253 || !hostnameRE.MatchString(h) || net.ParseIP(h) != nil {
			return nil, fmt.Errorf("%w: host %q of HAR %s: accepted: DNS names (a certificate names every host)", ErrBadOption, h, a.File)
		}
	}
	m := a.Manifest()
	mj, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return &content{manifest: m, manifestJSON: mj, objects: map[string]object{}, archive: a, host: host}, nil
}

// replayOrigins returns the hosts of ct's archive other than its site's host (every recorded
// host is mapped to the server and named on its certificate).
func replayOrigins(ct *content) []string {
	var out []string
	for _, h := range ct.archive.Hosts {
		if h != ct.host {
			out = append(out, h)
		}
	}
	return out
}

// serveReplay answers a request of a replayed site from its archive (pages.Archive.Match; the
// site's own host stands for the archive's main document host): the recorded status, headers
// (pages.ArchiveEntry.Header) and body, identity-encoded with an exact Content-Length,
// Cache-Control no-store and Timing-Allow-Origin * when the recording has none. A request the
// archive lacks is a 404 with ReplayMissHeader, counted in ReplayStats, except FaviconPath.
func (s *Server) serveReplay(c *gin.Context, ct *content) {
	r := c.Request
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.EqualFold(host, ct.host) {
		host = ct.archive.DocHost
	}
	e, kind := ct.archive.Match(r.Method, host, r.URL.EscapedPath(), r.URL.RawQuery)
	req := r.Method + " https://" + host + r.URL.RequestURI()
	h := c.Writer.Header()
	if e == nil && r.Method == http.MethodGet && r.URL.Path == FaviconPath {
		c.Header("Cache-Control", "no-store")
		c.String(http.StatusNotFound, "404 not in the replayed archive: %s (Chromium's own request, not counted)\n", req)
		return
	}
	s.replay.add(replayEvent{at: time.Now(), req: req, kind: kind})
	if e == nil {
		h.Set(ReplayMissHeader, "miss")
		h.Set("Cache-Control", "no-store")
		c.String(http.StatusNotFound, "404 not in the replayed archive: %s\n", req)
		return
	}
	for k, vs := range e.Header {
		h[k] = append([]string(nil), vs...)
	}
	if h.Get("Timing-Allow-Origin") == "" {
		h.Set("Timing-Allow-Origin", "*")
	}
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(e.Body)))
	c.Status(e.Status)
	if r.Method == http.MethodHead || e.Status == http.StatusNoContent || e.Status == http.StatusNotModified {
		c.Writer.WriteHeaderNow()
		return
	}
	if _, err := c.Writer.Write(e.Body); err != nil {
		s.log.Debug("write response", "path", r.URL.Path, "err", err)
	}
}
