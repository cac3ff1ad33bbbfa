// Package view serves result directories in a browser: runs, studies and sharded runs, drill-down
// to one load, side-by-side comparisons, and live updates of files being written.
//
// It never measures: it reads result files through package result and draws every statistic,
// plot and report through package analysis (the same numbers as pltlab report), and a study's
// report through a StudyFunc the caller supplies (cmd/pltlab wires package studies). It is
// read-only and safe by default: a Server serves only result sets found under its roots and the
// evidence files their records list (resolved inside the roots, symlinks included), every page
// is self-contained (no external asset; a Content-Security-Policy forbids any), and the address
// is loopback unless the caller chooses otherwise (IsLoopback).
package view

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/result"
)

// DefaultAddr is the address pltlab view listens on: loopback only.
const DefaultAddr = "127.0.0.1:8080"

// DefaultMaxFileBytes bounds a result file the view reads (512 MiB, about 20000 loads with
// their resources); a larger file is listed with the reason it is not read.
const DefaultMaxFileBytes = 512 << 20

// DefaultPoll is how often a live page's server looks for new lines (the live deadline is 2 s
// from a line's write to the page).
const DefaultPoll = 250 * time.Millisecond

// CSP is the Content-Security-Policy of every response: nothing is fetched from elsewhere;
// scripts only from the view itself; styles inline (the SVG plots carry style attributes);
// images from the view or data: URIs (filmstrips).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Study is a study's report for the view: its findings (the table the page opens with) and
// the body of its report.html.
type Study struct {
	// Title is the report's heading.
	Title string
	// Note is shown under the title (e.g. that the scale was not identified), "" for none.
	Note string
	// Findings are the findings table's rows in order.
	Findings []Finding
	// Body is report.html's body without its findings section (trusted HTML from the study's
	// template); its figures are referenced as FILE.svg and its parts as PART/report.html.
	Body string
	// Figure writes the figure named file ("heatmap-link1") in format "svg"; found false when
	// there is none.
	Figure func(w io.Writer, file, format string) (found bool, err error)
	// Part returns the analysis of the part called name, nil when there is none.
	Part func(name string) *analysis.Report
}

// Finding is one row of a study's findings table.
type Finding struct {
	// Claim, Source and Criterion are the published finding, where it was published and how
	// it is judged; Verdict and Evidence the judgement.
	Claim, Source, Criterion, Verdict, Evidence string
	// See are the report sections the evidence is in.
	See []Anchor
}

// Anchor names a section of a study report: its title and its element ID ("" when the section
// is in another report, e.g. a study variant's: shown as text, not linked).
type Anchor struct{ Title, ID string }

// StudyFunc returns the study report of recs, or nil (and no error) when recs are not a
// study's records.
type StudyFunc func(recs []*result.Record) (*Study, error)

// Options configures New. Roots is required; the zero value of the others means the defaults.
type Options struct {
	// Roots are the directories and result files to serve (pltlab view's arguments).
	Roots []string
	// Study renders study reports; nil shows studies as runs.
	Study StudyFunc
	// MaxFileBytes bounds a result file (0 means DefaultMaxFileBytes).
	MaxFileBytes int64
	// Poll is the live pages' poll interval (0 means DefaultPoll).
	Poll time.Duration
	// Logger receives request errors (slog.Default() when nil).
	Logger *slog.Logger
}

// Server serves the result sets under its roots. Create it with New.
type Server struct {
	opts    Options
	roots   []string // absolute, symlinks resolved
	mu      sync.Mutex
	cache   map[string]*loaded // by set ID
	flights map[string]*flight // parses under way, by set ID and stamp
	parses  chan struct{}      // holds a token per parse under way (at most maxParses)
	sets    []*Set             // the last scan
	cut     []string           // roots whose last scan stopped at maxScan entries
	parsed  atomic.Int64       // parses made (for the tests of the one shared parse)
}

// flight is one parse of a set that every request for the same set and stamp waits for.
type flight struct {
	done chan struct{}
	l    *loaded
}

// maxParses bounds the result files parsed at once, whatever the number of clients: each parse
// holds a file's records in memory.
const maxParses = 2

// New checks the roots and returns a Server on them. The error is one line naming the bad
// path: one that does not exist, or that is neither a directory nor a regular file.
func New(opts Options) (*Server, error) {
	if len(opts.Roots) == 0 {
		return nil, errors.New("no result directory or file given")
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	s := &Server{opts: opts, cache: map[string]*loaded{}, flights: map[string]*flight{}, parses: make(chan struct{}, maxParses)}
	for _, p := range opts.Roots {
		abs, err := resolveRoot(p)
		if err != nil {
			return nil, err
		}
		s.roots = append(s.roots, abs)
	}
	return s, nil
}

// resolveRoot returns p absolute with symlinks resolved, or the one-line error of a bad path.
func resolveRoot(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", fmt.Errorf("bad path %q: it does not exist (give result directories or .jsonl files)", p)
	}
	fi, err := os.Stat(abs)
	if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
		return "", fmt.Errorf("bad path %q: not a directory or a regular file (give result directories or .jsonl files)", p)
	}
	return abs, nil
}

// IsLoopback reports whether addr (HOST:PORT) binds to loopback only: localhost, 127.0.0.0/8
// or ::1. An empty host (all interfaces) is not loopback. The error is one line for an addr
// that is not HOST:PORT.
func IsLoopback(addr string) (bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("bad --addr %q: want HOST:PORT, e.g. %s", addr, DefaultAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return false, fmt.Errorf("bad --addr %q: port %q: accepted 0..65535 (0 picks a free one)", addr, port)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// Handler returns the view's HTTP handler (gin engine; read-only: GET and HEAD only).
func (s *Server) Handler() http.Handler {
	e := gin.New()
	e.Use(gin.Recovery(), securityHeaders)
	e.GET("/", s.index)
	e.GET("/compare", s.compare)
	e.GET("/static/:file", serveAsset)
	e.GET("/set/:id", func(c *gin.Context) { c.Redirect(http.StatusMovedPermanently, c.Request.URL.Path+"/") })
	e.GET("/set/:id/*rest", s.setRoute)
	e.NoRoute(func(c *gin.Context) { s.fail(c, http.StatusNotFound, "no such page: "+c.Request.URL.Path) })
	e.NoMethod(func(c *gin.Context) { s.fail(c, http.StatusMethodNotAllowed, "the view is read-only") })
	e.HandleMethodNotAllowed = true
	return e
}

// securityHeaders sets the Content-Security-Policy and the headers that keep pages from being
// framed or sniffed.
func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.Next()
}

// Serve listens on addr and serves until ctx is done, then shuts down (in-flight requests get
// 2 s). ready, when not nil, is called with the listening address (the port chosen for ":0").
func (s *Server) Serve(ctx context.Context, addr string, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return s.ServeOn(ctx, ln)
}

// ServeOn serves on ln (which it closes) until ctx is done, then shuts down as Serve does.
func (s *Server) ServeOn(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return nil
}
