package pages

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/net/html"
)

// mixedSpec has every object type, sizes at and just above each type's minimum, sizes that are
// not multiples of 4 (fonts), and objects on two other origins.
const mixedSpec = "1x20KB:css,1x128B:css@o1,2x50KB:js,1x129B:js-body,1x30KB:js-async,1x4KB:js-defer@cdn," +
	"1x40KB:font,1x580B:font,1x40001B:font@o1,2x30KB,1x398B@cdn,2x5KB:fetch,3x256B:fetch-chain@o1,2x1KB:fetch-chain,1x8KB:iframe@o1,1x256B:iframe," +
	"2x2KB:iframe@cdn(2x1KB,1x200B:css,1x200B:js-async),1x1500B:iframe(1x500B,1x150B:js-body)"

func TestGenerateTyped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	spec := mustParse(t, mixedSpec)
	m, err := Generate(dir, spec, 9)
	if err != nil {
		t.Fatal(err)
	}
	if m.Items != spec.String() || len(m.Objects) != spec.Objects() || m.TotalBytes != spec.TotalBytes() {
		t.Fatalf("manifest %+v", m)
	}
	id := PageID(spec.String(), 9)
	wantHosts := []string{"o1." + id + ".plt.test", "cdn." + id + ".plt.test"}
	if got := m.OriginHosts(); strings.Join(got, ",") != strings.Join(wantHosts, ",") {
		t.Errorf("origin hosts %v, want %v", got, wantHosts)
	}
	plan := spec.objects()
	files := map[string][]byte{}
	for i, o := range m.Objects {
		p := plan[i]
		b, err := os.ReadFile(filepath.Join(dir, o.Path))
		if err != nil {
			t.Fatal(err)
		}
		files[o.URL()] = b
		if int64(len(b)) != p.Size || o.Size != p.Size {
			t.Errorf("object %d %s: %d bytes on disk, manifest %d, spec %d", i, o.Path, len(b), o.Size, p.Size)
		}
		if o.Type != p.Type || o.Path != objectPathFor(p.Type, i, len(plan)) {
			t.Errorf("object %d: type %q path %s, want %q", i, o.Type, o.Path, p.Type)
		}
		wantOrigin := map[string]string{"": "", "o1": wantHosts[0], "cdn": wantHosts[1]}[p.Origin]
		if p.frame >= 0 {
			wantOrigin = m.Objects[p.frame].Origin
			if o.Frame != m.Objects[p.frame].Path || m.Objects[p.frame].Type != TypeIframe {
				t.Errorf("object %s: frame %q, want %s", o.Path, o.Frame, m.Objects[p.frame].Path)
			}
		}
		if o.Origin != wantOrigin {
			t.Errorf("object %s: origin %q, want %q", o.Path, o.Origin, wantOrigin)
		}
		checkTyped(t, m, o, b)
	}
	checkChains(t, m, files)
	checkTypedHTML(t, dir, m)
	checkFrames(t, m, files)
}

// checkFrames checks that each iframe that holds objects references exactly them (by path, on
// its own origin) and posts its Resource Timing to the page.
func checkFrames(t *testing.T, m *Manifest, files map[string][]byte) {
	t.Helper()
	held := 0
	for _, f := range m.Objects {
		if f.Type != TypeIframe {
			continue
		}
		doc := string(files[f.URL()])
		n := 0
		for _, o := range m.Objects {
			if o.Frame != f.Path {
				continue
			}
			n++
			if !strings.Contains(doc, `src="`+o.Path+`"`) && !strings.Contains(doc, `href="`+o.Path+`"`) || o.Origin != f.Origin {
				t.Errorf("iframe %s does not hold %s on its origin (%q, frame's %q)", f.Path, o.Path, o.Origin, f.Origin)
			}
		}
		held += n
		if posts := strings.Contains(doc, "parent.postMessage({pltlabFrame"); posts != (n > 0) {
			t.Errorf("iframe %s holds %d objects, posts its timing: %v", f.Path, n, posts)
		}
		if n > 0 && int64(len(doc)) < frameMinSize(nil)+int64(n)*frameObjectSize/2 {
			t.Errorf("iframe %s: %d B", f.Path, len(doc))
		}
	}
	if held != 2*4+2 {
		t.Errorf("iframes hold %d objects, want 10", held)
	}
}

// TestFrameRoom: the room an iframe keeps for what it holds covers its script and the longest
// markup of each type on the longest path.
func TestFrameRoom(t *testing.T) {
	if len(frameScript) > frameScriptSize {
		t.Errorf("frame script %d B, room %d", len(frameScript), frameScriptSize)
	}
	var objs []Object
	for _, ty := range FrameTypes {
		if ty == TypeImage {
			ty = ""
		}
		objs = append(objs, Object{Path: objectPathFor(ty, 9999, 10000), Size: MaxObjectSize, Type: ty, Frame: "/iframe/10000.html"})
	}
	markup := frameMarkup("/iframe/10000.html", objs)
	prefix, suffix := textParts(Object{Path: "/iframe/10000.html", Type: TypeIframe}, markup)
	if need := int64(len(prefix) + len(suffix)); need > frameMinSize([]Item{{Count: len(objs), Size: 1}}) {
		t.Errorf("iframe of %d objects needs %d B, room %d", len(objs), need, frameMinSize([]Item{{Count: len(objs), Size: 1}}))
	}
	if empty, suf := textParts(Object{Path: "/iframe/10000.html", Type: TypeIframe}, ""); int64(len(empty)+len(suf)) > minDocSize {
		t.Errorf("empty iframe needs %d B", len(empty)+len(suf))
	}
}

// checkTyped checks that b is a valid object of o's type (of the page of m).
func checkTyped(t *testing.T, m *Manifest, o Object, b []byte) {
	t.Helper()
	s := string(b)
	switch o.Type {
	case "":
		checkJPEG(t, b, o.Size, o.Width)
	case TypeCSS:
		want := "/* pltlab stylesheet " + o.Path + " */\n:root{--pltlab-" + objectNumber(o.Path) + ":1}\n/*"
		checkComment(t, o, s, want, "*/\n", "*/")
	case TypeJS, TypeJSBody, TypeJSAsync, TypeJSDefer:
		want := "/* pltlab script " + o.Path + " */\n(self.pltlabRan = self.pltlabRan || []).push(\"" + o.Path + "\");\n/*"
		checkComment(t, o, s, want, "*/\n", "*/")
	case TypeIframe:
		aux := ""
		if slices.ContainsFunc(m.Objects, func(x Object) bool { return x.Frame == o.Path }) {
			aux = frameMarkup(o.Path, m.Objects)
		}
		prefix, _ := textParts(o, aux)
		if !strings.HasPrefix(prefix, "<!DOCTYPE html>\n") || !strings.HasSuffix(prefix, "<!--") {
			t.Errorf("iframe prefix %q", prefix)
		}
		checkComment(t, o, s, prefix, "-->\n", "--")
		doc, err := html.Parse(bytes.NewReader(b))
		if err != nil || !strings.Contains(renderText(doc), "pltlab iframe "+o.Path) {
			t.Errorf("iframe %s does not parse as HTML with its text: %v", o.Path, err)
		}
	case TypeFetch, TypeFetchChain:
		var j struct{ Path, Next, Pad string }
		if err := json.Unmarshal(b, &j); err != nil || j.Path != o.Path {
			t.Errorf("fetch %s: not JSON naming itself: %v (%.80s)", o.Path, err, s)
		}
	case TypeFont:
		f, err := sfnt.Parse(b)
		if err != nil {
			t.Fatalf("font %s (%d B): %v", o.Path, len(b), err)
		}
		var buf sfnt.Buffer
		if n := f.NumGlyphs(); n != 1 {
			t.Errorf("font %s: %d glyphs, want 1", o.Path, n)
		}
		if name, err := f.Name(&buf, sfnt.NameIDFamily); err != nil || name != "pltlab" {
			t.Errorf("font %s: family %q, %v", o.Path, name, err)
		}
		if bounds, err := f.Bounds(&buf, 1000, 0); err != nil || bounds.Max.X != 400 {
			t.Errorf("font %s: bounds %v, %v", o.Path, bounds, err)
		}
		if !bytes.HasPrefix(b, []byte{0, 1, 0, 0}) || checksum(b) != 0xB1B0AFBA {
			t.Errorf("font %s: bad sfnt version or whole-file checksum %#x", o.Path, checksum(b))
		}
	default:
		t.Errorf("object %s: unknown type %q", o.Path, o.Type)
	}
}

// checkComment checks that s is prefix, padding without closer, suffix.
func checkComment(t *testing.T, o Object, s, prefix, suffix, closer string) {
	t.Helper()
	if !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, suffix) {
		t.Errorf("%s %s: %.120q does not start with %q and end with %q", o.Type, o.Path, s, prefix, suffix)
		return
	}
	if pad := s[len(prefix) : len(s)-len(suffix)]; strings.Contains(pad, closer) || strings.Trim(pad, padAlphabet) != "" {
		t.Errorf("%s %s: padding closes its comment or holds other characters", o.Type, o.Path)
	}
}

func renderText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// checkChains follows every chain from its first object through "next" and checks its depths.
func checkChains(t *testing.T, m *Manifest, files map[string][]byte) {
	t.Helper()
	seen := 0
	for _, o := range m.Objects {
		if o.Type != TypeFetchChain && o.Type != TypeFetch || o.Depth != 1 {
			continue
		}
		for depth, u := 1, o.URL(); u != ""; depth++ {
			var j struct{ Next string }
			if err := json.Unmarshal(files[u], &j); err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			if got := objectAt(m, u); got == nil || got.Depth != depth {
				t.Errorf("%s: depth %v, want %d", u, got, depth)
			}
			seen++
			u = j.Next
		}
	}
	if seen != 2+3+2 {
		t.Errorf("chains reach %d fetched objects, want 7", seen)
	}
}

func objectAt(m *Manifest, u string) *Object {
	for i := range m.Objects {
		if m.Objects[i].URL() == u {
			return &m.Objects[i]
		}
	}
	return nil
}

// checkTypedHTML checks that index.html places every object by its type.
func checkTypedHTML(t *testing.T, dir string, m *Manifest) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	head, body, ok := strings.Cut(page, "</head>")
	if !ok {
		t.Fatalf("no </head>:\n%s", page)
	}
	if _, err := html.Parse(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	for _, o := range m.Objects {
		u := o.URL()
		if o.Frame != "" {
			if strings.Contains(page, `"`+u+`"`) || strings.Contains(page, `"`+o.Path+`"`) {
				t.Errorf("object %s of iframe %s is named by the page", o.Path, o.Frame)
			}
			continue
		}
		var want, where string
		switch o.Type {
		case "":
			want, where = `<img src="`+u+`"`, body
		case TypeCSS:
			want, where = `<link rel="stylesheet" href="`+u+`">`, head
		case TypeJS:
			want, where = `<script src="`+u+`"></script>`, head
		case TypeJSBody:
			want, where = `<script src="`+u+`"></script>`, body
		case TypeJSAsync:
			want, where = `<script async src="`+u+`"></script>`, head
		case TypeJSDefer:
			want, where = `<script defer src="`+u+`"></script>`, head
		case TypeFont:
			n := objectNumber(o.Path)
			want, where = `@font-face{font-family:"pltlab-`+n+`";src:url("`+u+`") format("truetype")}`, head
			if !strings.Contains(body, `<p class="pltlab-`+n+`">`) {
				t.Errorf("no visible text uses font %s", o.Path)
			}
		case TypeIframe:
			want, where = `<iframe src="`+u+`"`, body
		case TypeFetch:
			want, where = `"`+u+`"`, body
		case TypeFetchChain:
			if o.Depth > 1 {
				if strings.Contains(page, u) {
					t.Errorf("chain link %s (depth %d) is named by the page", u, o.Depth)
				}
				continue
			}
			want, where = `"`+u+`"`, body
		}
		if strings.Count(where, want) != 1 {
			t.Errorf("%s %s: %q not once in its part of index.html", o.Type, o.Path, want)
		}
	}
	if !strings.Contains(body, "self."+PendingVar+"++") {
		t.Error("no fetch loader")
	}
	if !strings.Contains(head, "self."+PendingVar+" = (self."+PendingVar+" || 0) + 3;") || !strings.Contains(head, "self."+FrameResourcesVar+".push(r)") {
		t.Error("no frame listener for the 3 iframes that hold objects")
	}
}

func TestFontSizes(t *testing.T) {
	for _, size := range []int64{MinFontSize, MinFontSize + 1, MinFontSize + 2, MinFontSize + 3, 40_000, 1 << 20} {
		var b bytes.Buffer
		if err := writeFont(&b, size, func(p []byte) { clear(p) }); err != nil || int64(b.Len()) != size {
			t.Errorf("writeFont(%d): %d bytes, %v", size, b.Len(), err)
			continue
		}
		if _, err := sfnt.Parse(b.Bytes()); err != nil {
			t.Errorf("font of %d B: %v", size, err)
		}
	}
	if err := writeFont(&bytes.Buffer{}, MinFontSize-1, func([]byte) {}); err == nil {
		t.Error("font below MinFontSize written")
	}
	if got := TypeFont.MinSize(); got != MinFontSize || got <= 0 {
		t.Errorf("TypeFont.MinSize() = %d, want MinFontSize (%d)", got, MinFontSize)
	}
}

func TestOriginHosts(t *testing.T) {
	a := PageID("1x1KB@o1", 1)
	if b := PageID("1x1KB@o1", 2); a == b || len(a) != 9 || a[0] != 'p' {
		t.Errorf("page IDs %q, %q", a, b)
	}
	if got := OriginHost("o1", a); got != "o1."+a+".plt.test" {
		t.Errorf("OriginHost = %q", got)
	}
	for _, ok := range []string{"o1", "cdn", "a", "a-b", "abcdefghijklmnop"} {
		if !validOrigin(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "O1", "1o", "a-", "-a", "a.b", "a_b", "abcdefghijklmnopq"} {
		if validOrigin(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
