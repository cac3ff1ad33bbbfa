package pages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"html"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// writePage writes index.html, manifest.json and every object into the existing empty dir.
func writePage(ctx context.Context, dir string, spec Spec, seed int64) (*Manifest, error) {
	objs, aux := layout(spec, seed)
	made := map[string]bool{}
	for _, o := range objs {
		d := o.Path[1:strings.LastIndexByte(o.Path, '/')]
		if made[d] {
			continue
		}
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("create page directory: %w", err)
		}
		made[d] = true
	}
	objs, err := writeObjects(ctx, dir, objs, aux, seed)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Spec: spec.Label(), Items: spec.String(), Seed: seed, Index: IndexPath,
		TotalBytes: spec.TotalBytes(), Objects: objs}
	if err := os.WriteFile(filepath.Join(dir, IndexPath[1:]), indexHTML(m), 0o644); err != nil {
		return nil, fmt.Errorf("write page html: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode page manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write page manifest: %w", err)
	}
	return m, nil
}

// layout places every object of spec: its path (numbered across all objects in spec order),
// type, origin host, depth and holding iframe, and aux: for a fetch chain's links the URL of the
// next object, for an iframe that holds objects their markup ("" for none).
func layout(spec Spec, seed int64) (objs []Object, aux []string) {
	plan := spec.objects()
	id := PageID(spec.String(), seed)
	objs = make([]Object, len(plan))
	aux = make([]string, len(plan))
	for i, p := range plan {
		t := p.Type
		if t == TypeImage {
			t = ""
		}
		o := Object{Path: objectPathFor(t, i, len(plan)), Size: p.Size, Type: t}
		if p.Origin != "" {
			o.Origin = OriginHost(p.Origin, id)
		}
		if p.frame >= 0 {
			o.Origin, o.Frame = objs[p.frame].Origin, objs[p.frame].Path
		}
		switch t {
		case TypeFetch:
			o.Depth = 1
		case TypeFetchChain:
			o.Depth = p.index + 1
		}
		objs[i] = o
	}
	for i, p := range plan {
		switch {
		case p.Type == TypeFetchChain && p.index+1 < p.Count:
			aux[i] = objs[i+1].URL()
		case p.Type == TypeIframe && len(p.Frame) > 0:
			aux[i] = frameMarkup(objs[i].Path, objs)
		}
	}
	return objs, aux
}

// objectPathFor returns the URL path of object i (0-based) of n, of type t: "/DIR/NNNN.EXT" with
// the type's directory and extension ("/img/0001.jpg", "/css/0002.css", "/font/0003.ttf", ...),
// numbered from 1 across all objects with at least four digits.
func objectPathFor(t ObjectType, i, n int) string {
	ti := t.info()
	width := max(4, len(strconv.Itoa(n)))
	return fmt.Sprintf("/%s/%0*d.%s", ti.dir, width, i+1, ti.ext)
}

// writeObjects writes the objects under dir (aux: as layout gives it), in parallel on GOMAXPROCS
// workers, and returns them in spec order with their digests (and an image's dimensions). The
// first error stops the others.
func writeObjects(ctx context.Context, dir string, objs []Object, aux []string, seed int64) ([]Object, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]Object, len(objs))
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(objs)) {
		wg.Go(func() {
			ow, h := newObjectWriter(), sha256.New()
			for i := range jobs {
				o, err := writeObjectFile(ctx, dir, objs[i], aux[i], objectKey(seed, i), ow, h)
				if err != nil {
					cancel(err)
					continue
				}
				out[i] = o
			}
		})
	}
feed:
	for i := range objs {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// writeObjectFile writes object o to dir+o.Path (aux: as layout gives it) and returns its
// manifest entry.
func writeObjectFile(ctx context.Context, dir string, o Object, aux string, key [32]byte, ow *objectWriter, h hash.Hash) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	name := filepath.Join(dir, filepath.FromSlash(o.Path[1:]))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Object{}, fmt.Errorf("create page object: %w", err)
	}
	h.Reset()
	w := ctxWriter{ctx, io.MultiWriter(f, h)}
	switch o.Type {
	case "":
		var c core
		c, err = ow.write(w, o.Size, key)
		o.Width, o.Height = c.side, c.side
	case TypeFont:
		rng := padStream(key)
		err = writeFont(w, o.Size, func(b []byte) { rng.XORKeyStream(b, b) })
	default:
		err = writeText(w, o, aux, padStream(key), ow.buf)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Object{}, fmt.Errorf("write page object %s: %w", name, err)
	}
	o.SHA256 = hex.EncodeToString(h.Sum(nil))
	return o, nil
}

// ctxWriter fails writes once its context is done, so a large object stops within 64 KiB.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// indexHTML renders the page: minimal HTML5 whose only subresources are the objects (and, for
// fonts, what the inline style names); the data: icon stops the browser requesting /favicon.ico.
// The head holds the stylesheets and head scripts (and an inline <style> with each font's
// @font-face and a class that uses it), the body the font texts, images (each <img> with its
// width and height), iframes and body scripts in spec order, then the fetch loader. An image-only
// page is what it always was: head without objects, body of <img> elements.
func indexHTML(m *Manifest) []byte {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>pltlab page %s</title>\n", html.EscapeString(m.Spec))
	b.WriteString("<link rel=\"icon\" href=\"data:,\">\n")
	frameListener(&b, m.Objects)
	fontStyle(&b, m.Objects)
	for _, o := range m.Objects {
		if o.Frame != "" {
			continue
		}
		u := html.EscapeString(o.URL())
		switch o.Type {
		case TypeCSS:
			fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"%s\">\n", u)
		case TypeJS:
			fmt.Fprintf(&b, "<script src=\"%s\"></script>\n", u)
		case TypeJSAsync:
			fmt.Fprintf(&b, "<script async src=\"%s\"></script>\n", u)
		case TypeJSDefer:
			fmt.Fprintf(&b, "<script defer src=\"%s\"></script>\n", u)
		}
	}
	b.WriteString("</head>\n<body>\n")
	for _, o := range m.Objects {
		if o.Frame != "" {
			continue
		}
		u := html.EscapeString(o.URL())
		switch o.Type {
		case "":
			fmt.Fprintf(&b, "<img src=\"%s\" width=\"%d\" height=\"%d\" alt=\"\">\n", u, o.Width, o.Height)
		case TypeFont:
			fmt.Fprintf(&b, "<p class=\"pltlab-%s\">pltlab font %s</p>\n", objectNumber(o.Path), html.EscapeString(o.Path))
		case TypeIframe:
			fmt.Fprintf(&b, "<iframe src=\"%s\" width=\"300\" height=\"150\" title=\"pltlab iframe\"></iframe>\n", u)
		case TypeJSBody:
			fmt.Fprintf(&b, "<script src=\"%s\"></script>\n", u)
		}
	}
	fetchLoader(&b, m.Objects)
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}

// fontStyle writes the inline <style> of the page's fonts, if any: per font an @font-face of
// family "pltlab-NNNN" and a class of that name that uses it on the font's line of text.
func fontStyle(b *strings.Builder, objs []Object) {
	var rules []string
	for _, o := range objs {
		if o.Type == TypeFont {
			n := objectNumber(o.Path)
			rules = append(rules, fmt.Sprintf("@font-face{font-family:\"pltlab-%s\";src:url(\"%s\") format(\"truetype\")}\n.pltlab-%s{font-family:\"pltlab-%s\",sans-serif}\n", n, o.URL(), n, n))
		}
	}
	if len(rules) > 0 {
		b.WriteString("<style>\n" + strings.Join(rules, "") + "</style>\n")
	}
}

// frameListener writes, for a page whose iframes hold objects, the inline script that counts
// those iframes in self[PendingVar] and collects the Resource Timing entries each posts when it
// has loaded into self[FrameResourcesVar], its times moved onto the page's time origin.
func frameListener(b *strings.Builder, objs []Object) {
	n := 0
	for i, o := range objs {
		if o.Type == TypeIframe && i+1 < len(objs) && objs[i+1].Frame == o.Path {
			n++
		}
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(b, `<script>
self.%[1]s = (self.%[1]s || 0) + %[3]d;
self.%[2]s = [];
addEventListener('message', e => {
  const d = e.data;
  if (!d || !d.pltlabFrame) return;
  const shift = d.timeOrigin - performance.timeOrigin;
  for (const r of d.resources) {
    for (const k of ['startTime', 'connectStart', 'connectEnd', 'secureConnectionStart', 'requestStart', 'responseStart', 'responseEnd']) {
      if (r[k] > 0) r[k] += shift;
    }
    self.%[2]s.push(r);
  }
  self.%[1]s--;
});
</script>
`, PendingVar, FrameResourcesVar, n)
}

// frameMarkup returns the markup of the objects the iframe at path holds (Object.Frame), as
// its document places them: stylesheets and head scripts, its line of text, images and body
// scripts, then the script that posts its Resource Timing entries to the page once it has loaded.
func frameMarkup(path string, objs []Object) string {
	var head, body strings.Builder
	for _, o := range objs {
		if o.Frame != path {
			continue
		}
		switch o.Type {
		case "":
			fmt.Fprintf(&body, "<img src=\"%s\" width=\"%d\" height=\"%d\" alt=\"\">\n", o.Path, coreFor(o.Size).side, coreFor(o.Size).side)
		case TypeCSS:
			fmt.Fprintf(&head, "<link rel=\"stylesheet\" href=\"%s\">\n", o.Path)
		case TypeJS:
			fmt.Fprintf(&head, "<script src=\"%s\"></script>\n", o.Path)
		case TypeJSAsync:
			fmt.Fprintf(&head, "<script async src=\"%s\"></script>\n", o.Path)
		case TypeJSDefer:
			fmt.Fprintf(&head, "<script defer src=\"%s\"></script>\n", o.Path)
		case TypeJSBody:
			fmt.Fprintf(&body, "<script src=\"%s\"></script>\n", o.Path)
		}
	}
	return head.String() + "\x00" + body.String() + frameScript
}

// frameScript posts the iframe's Resource Timing entries to the page once it has loaded.
const frameScript = `<script>
addEventListener('load', () => parent.postMessage({pltlabFrame: location.pathname, timeOrigin: performance.timeOrigin,
  resources: performance.getEntriesByType('resource').map(r => ({name: r.name, nextHopProtocol: r.nextHopProtocol,
    transferSize: r.transferSize, encodedBodySize: r.encodedBodySize, startTime: r.startTime,
    connectStart: r.connectStart, connectEnd: r.connectEnd, secureConnectionStart: r.secureConnectionStart,
    requestStart: r.requestStart, responseStart: r.responseStart, responseEnd: r.responseEnd,
    responseStatus: r.responseStatus || 0}))}, '*'));
</script>
`

// fetchLoader writes the inline script that fetches every TypeFetch object and the first object
// of every chain, following each chain's "next" as its objects arrive, and counts the fetches in
// flight in self[PendingVar].
func fetchLoader(b *strings.Builder, objs []Object) {
	var first []string
	for _, o := range objs {
		if (o.Type == TypeFetch || o.Type == TypeFetchChain) && o.Depth == 1 {
			first = append(first, strconv.Quote(o.URL()))
		}
	}
	if len(first) == 0 {
		return
	}
	fmt.Fprintf(b, `<script>
self.%[1]s = self.%[1]s || 0;
const pltlabFetch = u => {
  self.%[1]s++;
  fetch(u).then(r => r.json()).then(j => { if (j.next) pltlabFetch(j.next); })
    .catch(() => {}).finally(() => { self.%[1]s--; });
};
[%[2]s].forEach(pltlabFetch);
</script>
`, PendingVar, strings.Join(first, ", "))
}
