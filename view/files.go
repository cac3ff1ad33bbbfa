package view

import (
	"bytes"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pltlab/pltlab/result"
)

// artifactLink is one evidence file of a load: served when it resolves inside the roots.
type artifactLink struct {
	Name, Kind, Href, Why string
	Size                  int64
}

// artifactKind names an evidence file by its name: HAR, NetLog, qlog, pcapng.
func artifactKind(name string) string {
	switch {
	case strings.HasSuffix(name, ".har"):
		return "HAR"
	case strings.HasSuffix(name, ".loads.jsonl"):
		return "NetLog load index"
	case strings.Contains(name, "netlog"):
		return "NetLog"
	case strings.HasSuffix(name, "qlog"):
		return "qlog"
	case strings.HasSuffix(name, ".pcapng"):
		return "pcapng"
	}
	return "file"
}

// artifacts lists r's evidence files with their download links (n is r's URL ID).
func (s *Server) artifacts(l *loaded, r *result.Record, n string) []artifactLink {
	var out []artifactLink
	for i, a := range r.Artifacts {
		al := artifactLink{Name: a, Kind: artifactKind(a)}
		if p, ok := s.resolveArtifact(l, a); ok {
			al.Href = base(l.set) + "artifact/" + n + "/" + strconv.Itoa(i) + "/" + path.Base(a)
			if fi, err := os.Stat(p); err == nil {
				al.Size = fi.Size()
			}
		} else {
			al.Why = "not found under the served paths"
		}
		out = append(out, al)
	}
	return out
}

// resolveArtifact finds the file a record lists as rel (relative to the run's --artifacts
// directory, which the record does not name): a file under the roots whose path ends in
// /rel, preferring the one nearest the set's own directory. Only files found by the scan are
// candidates, so a rel with ".." or a symlink out of the tree never resolves.
func (s *Server) resolveArtifact(l *loaded, rel string) (string, bool) {
	clean := path.Clean("/" + rel)
	if clean != "/"+rel || strings.Contains(rel, "\\") {
		return "", false
	}
	suffix := filepath.FromSlash(clean)
	best := ""
	for _, f := range l.files {
		if !strings.HasSuffix(f, suffix) {
			continue
		}
		if best == "" || (strings.HasPrefix(f, l.set.Dir()+string(filepath.Separator)) && !strings.HasPrefix(best, l.set.Dir()+string(filepath.Separator))) {
			best = f
		}
	}
	if best == "" {
		return "", false
	}
	real, ok := s.inside(best)
	return real, ok
}

// artifact serves evidence file i of load n as a download.
func (s *Server) artifact(c *gin.Context, l *loaded, n, i string) {
	r := l.record(n)
	k, err := strconv.Atoi(i)
	if r == nil || err != nil || k < 0 || k >= len(r.Artifacts) {
		s.fail(c, http.StatusNotFound, "no such evidence file")
		return
	}
	p, ok := s.resolveArtifact(l, r.Artifacts[k])
	if !ok {
		s.fail(c, http.StatusNotFound, "evidence file "+strconv.Quote(r.Artifacts[k])+" is not under the served paths")
		return
	}
	f, err := os.Open(p)
	if err != nil {
		s.fail(c, http.StatusNotFound, "evidence file: "+err.Error())
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		s.fail(c, http.StatusNotFound, "evidence file is not a regular file")
		return
	}
	c.Header("Content-Disposition", "attachment; filename="+strconv.Quote(filepath.Base(p)))
	c.Header("Content-Type", "application/octet-stream")
	http.ServeContent(c.Writer, c.Request, "", fi.ModTime(), f)
}

// studyFigure draws one figure of a study report as SVG.
func (s *Server) studyFigure(c *gin.Context, l *loaded, file string) {
	var buf bytes.Buffer
	found, err := l.study.Figure(&buf, file, "svg")
	switch {
	case !found:
		s.fail(c, http.StatusNotFound, "no figure "+strconv.Quote(file)+" in this study's report")
	case err != nil:
		s.fail(c, http.StatusInternalServerError, "figure "+file+": "+err.Error())
	default:
		c.Data(http.StatusOK, "image/svg+xml", buf.Bytes())
	}
}

// partReport serves a study part's full analysis report (report.html of the part's directory).
func (s *Server) partReport(c *gin.Context, l *loaded, name string) {
	rep := l.study.Part(name)
	if rep == nil {
		s.fail(c, http.StatusNotFound, "no part "+strconv.Quote(name)+" in this study")
		return
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		s.fail(c, http.StatusInternalServerError, err.Error())
		return
	}
	c.Data(http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
}
