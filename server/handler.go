package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/pltlab/pltlab/pages"
)

// Fixed URL paths besides the page and its objects.
const (
	// HealthPath answers 200 "ok" once the server is serving (readiness).
	HealthPath = "/healthz"
	// ManifestPath serves the page's manifest.json.
	ManifestPath = "/manifest.json"
	// StatsPath serves Stats as JSON.
	StatsPath = "/_pltlab/stats"
)

// Stats are the server's totals, served as JSON at StatsPath.
type Stats struct {
	// Conns is the number of connections accepted (all protocols); OpenConns those still open.
	Conns     uint64 `json:"conns"`
	OpenConns int    `json:"open_conns"`
	// Requests is the number of requests served, all paths included.
	Requests int64 `json:"requests"`
	// Bytes is the sum of the response bodies served, in bytes.
	Bytes int64 `json:"bytes"`
}

// content is a page directory held in memory.
type content struct {
	manifest     *pages.Manifest
	manifestJSON []byte
	index        []byte
	objects      map[string]object // URL path -> the object
	dir          string            // the page directory ("" for the empty page)
	archive      *pages.Archive    // the HAR this site replays (Site.Archive), else nil
	host         string            // the site's hostname (replayed sites only)
}

// object is one page object: held in memory when small (mem), else read from its file at each
// request (the page cache keeps it, outside the process's memory), so a server of many large
// pages (kakhki2017's full grid: 3.8 GB on one link) does not hold them all.
type object struct {
	file        string // the object's file
	size        int64  // its size in bytes (checked against the manifest at load)
	mem         []byte // its bytes, when held in memory
	contentType string // its type's Content-Type (pages.ObjectType.ContentType)
	// crossOrigin is true for an object on another origin than its page's (pages.Object.Origin):
	// it is served with CORSHeaders, so that fonts and fetches may be read and its Resource
	// Timing (sizes, protocol) is exposed to the page.
	crossOrigin bool
}

// CORSHeaders are the headers an object on another origin than its page's is served with:
// Access-Control-Allow-Origin (fonts and fetch() are CORS requests, Fetch Standard section 3.2)
// and Timing-Allow-Origin (without it Resource Timing hides a cross-origin resource's sizes and
// protocol, W3C Resource Timing section 4.5). Objects on the page's own origin get neither, so
// image-only pages are served byte for byte as before.
var CORSHeaders = map[string]string{"Access-Control-Allow-Origin": "*", "Timing-Allow-Origin": "*"}

// MemObjectMax is the largest page object, in bytes, a server holds in memory: objects up to it
// are held as long as all the server's held objects stay under MemoryBudget bytes; the rest are
// read from their files at each request.
const MemObjectMax = 1 << 20

// MemoryBudget is the most page-object bytes a server holds in memory (objects of at most 1 MiB
// each; larger ones, and those beyond the budget, are read from their files at each request):
// the server's share of a shard's memory footprint (experiment.FootprintMiB).
const MemoryBudget = 128 << 20

// urlPathRE is what a page or object URL path may look like: no '..', no query, no escapes.
var urlPathRE = regexp.MustCompile(`^(/[A-Za-z0-9_-][A-Za-z0-9._-]*)+$`)

// loadContent reads dir's manifest, page and objects, and checks every object's size and SHA-256.
// dir "" gives an empty page without objects (a server for bulk flows only).
func loadContent(dir string, held *int64) (*content, error) {
	if dir == "" {
		m := &pages.Manifest{Index: pages.IndexPath}
		mj, err := json.Marshal(m)
		return &content{manifest: m, manifestJSON: mj, index: []byte("<!DOCTYPE html><title>pltlab</title>\n"),
			objects: map[string]object{}}, err
	}
	m, err := pages.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	c := &content{manifest: m, objects: map[string]object{}, dir: dir}
	if c.manifestJSON, err = os.ReadFile(filepath.Join(dir, pages.ManifestFile)); err != nil {
		return nil, fmt.Errorf("read page manifest: %w", err)
	}
	if c.index, err = readPageFile(dir, m.Index); err != nil {
		return nil, err
	}
	for _, o := range m.Objects {
		if _, dup := c.objects[o.Path]; dup || o.Path == m.Index || isFixedPath(o.Path) {
			return nil, fmt.Errorf("page manifest in %s: object path %s is used twice", dir, o.Path)
		}
		b, err := readPageFile(dir, o.Path)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		if int64(len(b)) != o.Size || hex.EncodeToString(sum[:]) != o.SHA256 {
			return nil, fmt.Errorf("page object %s in %s: %d bytes, sha256 %x; manifest says %d bytes, %s",
				o.Path, dir, len(b), sum, o.Size, o.SHA256)
		}
		ctype := o.Type.ContentType()
		if ctype == "" {
			return nil, fmt.Errorf("page object %s in %s: unknown type %q", o.Path, dir, o.Type)
		}
		obj := object{file: filepath.Join(dir, filepath.FromSlash(o.Path[1:])), size: int64(len(b)),
			contentType: ctype, crossOrigin: o.Origin != ""}
		if obj.size <= MemObjectMax && *held+obj.size <= MemoryBudget {
			obj.mem = b
			*held += obj.size
		}
		c.objects[o.Path] = obj
	}
	return c, nil
}

// readPageFile reads the file of URL path p below dir, refusing paths that could leave dir.
func readPageFile(dir, p string) ([]byte, error) {
	if !urlPathRE.MatchString(p) || path.Clean(p) != p {
		return nil, fmt.Errorf("page manifest in %s: bad URL path %q: accepted: /name/name.ext with letters, digits, '.', '_', '-'", dir, p)
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p[1:])))
	if err != nil {
		return nil, fmt.Errorf("read page file: %w", err)
	}
	return b, nil
}

func isFixedPath(p string) bool {
	return p == "/" || p == HealthPath || p == ManifestPath || p == StatsPath || p == BulkPath
}

// newHandler builds the one gin handler every listener serves. Only the page, its objects and
// the fixed paths exist; anything else is 404 (the engine never redirects or cleans paths, and
// nothing is read from disk after New). gin's mode is process-wide: the program sets it (pltlab's
// main sets release mode, so gin prints nothing); in debug mode gin prints its routes to stdout.
func (s *Server) newHandler() http.Handler {
	e := gin.New()
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = false
	e.RemoveExtraSlash = false
	e.Use(s.recoverPanic, s.track)
	e.GET(HealthPath, func(c *gin.Context) { s.write(c, "text/plain; charset=utf-8", []byte("ok\n")) })
	e.GET(ManifestPath, func(c *gin.Context) {
		if ct := s.site(c); ct != nil {
			s.write(c, "application/json", ct.manifestJSON)
		}
	})
	e.GET(StatsPath, s.serveStats)
	e.GET(BulkPath, s.serveBulk)
	e.POST(BulkPath, s.serveBulkSink)
	e.NoRoute(s.serveObject)
	return e
}

// track counts the request against its connection, and adds Alt-Svc to TCP responses.
func (s *Server) track(c *gin.Context) {
	start := time.Now()
	if s.altSvc != "" && c.Request.ProtoMajor < 3 {
		c.Header("Alt-Svc", s.altSvc)
	}
	c.Next()
	body := int64(max(c.Writer.Size(), 0))
	ct := s.contentFor(c.Request)
	isPage := ct != nil && (c.Request.URL.Path == "/" || c.Request.URL.Path == ct.manifest.Index)
	s.reg.request(entryFrom(c.Request.Context()), c.Request, body, start, isPage && c.Writer.Status() == http.StatusOK)
}

// recoverPanic turns a handler panic into a 500 and a log line (gin's own recovery prints to stderr).
func (s *Server) recoverPanic(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "path", c.Request.URL.Path, "panic", v)
			c.AbortWithStatus(http.StatusInternalServerError)
		}
	}()
	c.Next()
}

// site returns the request's site, or answers 421 (Misdirected Request) and returns nil for a
// host the server does not serve.
func (s *Server) site(c *gin.Context) *content {
	ct := s.contentFor(c.Request)
	if ct == nil {
		c.Header("Cache-Control", "no-store")
		c.String(http.StatusMisdirectedRequest, "421 this server does not serve %s\n", c.Request.Host)
	}
	return ct
}

// serveObject serves the request's site's page ("/" or its index path) or one of its objects;
// anything else is 404.
func (s *Server) serveObject(c *gin.Context) {
	ct := s.site(c)
	if ct == nil {
		return
	}
	if ct.archive != nil {
		s.serveReplay(c, ct)
		return
	}
	p := c.Request.URL.Path
	if (p == "/" || p == ct.manifest.Index) && (c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead) {
		s.write(c, "text/html; charset=utf-8", ct.index)
		return
	}
	obj, ok := ct.objects[p]
	if !ok || (c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead) {
		c.Header("Cache-Control", "no-store")
		c.String(http.StatusNotFound, "404 page not found\n")
		return
	}
	if obj.crossOrigin {
		for k, v := range CORSHeaders {
			c.Header(k, v)
		}
	}
	if obj.mem != nil {
		s.write(c, obj.contentType, obj.mem)
		return
	}
	s.writeFile(c, obj.contentType, obj)
}

// writeFile sends obj's file whole with an exact Content-Length, as write does; a file that
// changed size since the server loaded it is a 500 (the manifest's size is what is promised).
func (s *Server) writeFile(c *gin.Context, contentType string, obj object) {
	f, err := os.Open(obj.file)
	if err != nil {
		s.log.Error("open page object", "file", obj.file, "err", err)
		c.AbortWithStatus(http.StatusInternalServerError)
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != obj.size {
		s.log.Error("page object changed since the server loaded it", "file", obj.file)
		c.AbortWithStatus(http.StatusInternalServerError)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.FormatInt(obj.size, 10))
	h.Set("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		c.Writer.WriteHeaderNow()
		return
	}
	if _, err := io.CopyN(c.Writer, f, obj.size); err != nil {
		s.log.Debug("write response", "path", c.Request.URL.Path, "err", err)
	}
}

func (s *Server) serveStats(c *gin.Context) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(s.reg.stats()); err != nil {
		c.AbortWithStatus(http.StatusInternalServerError)
		return
	}
	s.write(c, "application/json", buf.Bytes())
}

// write sends b whole with an exact Content-Length and Cache-Control: no-store (HEAD: headers only).
func (s *Server) write(c *gin.Context, contentType string, b []byte) {
	h := c.Writer.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		c.Writer.WriteHeaderNow()
		return
	}
	if _, err := c.Writer.Write(b); err != nil {
		s.log.Debug("write response", "path", c.Request.URL.Path, "err", err)
	}
}
