package view

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
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
		if p, why := s.resolveArtifact(l, r, a); why == "" {
			al.Href = base(l.set) + "artifact/" + n + "/" + strconv.Itoa(i) + "/" + path.Base(a)
			if fi, err := os.Stat(p); err == nil {
				al.Size = fi.Size()
			}
		} else {
			al.Why = why
		}
		out = append(out, al)
	}
	return out
}

// resolveArtifact finds the file a record lists as rel (relative to the run's --artifacts
// directory): dir/rel when the record names its directory (Record.ArtifactsDir) and that file
// is under the served roots; otherwise (files moved, or records written before the directory
// was recorded) the one file under the roots whose path ends in /rel, and nothing when several
// do: two runs of one experiment name (every reproduction of a study) hold the same relative
// paths, and a guess would link another run's evidence. why says what failed. Only files found
// by the scan are candidates, so a rel with ".." or a symlink out of the tree never resolves.
func (s *Server) resolveArtifact(l *loaded, r *result.Record, rel string) (p, why string) {
	clean := path.Clean("/" + rel)
	if clean != "/"+rel || strings.Contains(rel, "\\") {
		return "", "not a relative path"
	}
	suffix := filepath.FromSlash(clean)
	if r.ArtifactsDir != "" {
		if real, ok := s.inside(filepath.Join(r.ArtifactsDir, suffix)); ok {
			return real, ""
		}
	}
	var found []string
	for _, f := range l.files {
		if strings.HasSuffix(f, suffix) {
			found = append(found, f)
		}
	}
	// The scan does not enter load folders: look where --artifacts directories lie, a root or a
	// folder up to two levels in it.
	for _, root := range s.roots {
		for _, pat := range []string{"", "*", filepath.Join("*", "*")} {
			ms, _ := filepath.Glob(filepath.Join(root, pat, suffix))
			for _, m := range ms {
				if real, ok := s.inside(m); ok && !slices.Contains(found, real) {
					found = append(found, real)
				}
			}
		}
	}
	switch len(found) {
	case 0:
		return "", "not found under the served paths"
	case 1:
		if real, ok := s.inside(found[0]); ok {
			return real, ""
		}
		return "", "not found under the served paths"
	}
	return "", fmt.Sprintf("%d files under the served paths end in %s (another run of the same experiment name): serve this run's --artifacts directory alone", len(found), rel)
}

// artifact serves evidence file i of load n as a download.
func (s *Server) artifact(c *gin.Context, l *loaded, n, i string) {
	r := l.record(n)
	k, err := strconv.Atoi(i)
	if r == nil || err != nil || k < 0 || k >= len(r.Artifacts) {
		s.fail(c, http.StatusNotFound, "no such evidence file")
		return
	}
	p, why := s.resolveArtifact(l, r, r.Artifacts[k])
	if why != "" {
		s.fail(c, http.StatusNotFound, "evidence file "+strconv.Quote(r.Artifacts[k])+": "+why)
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
