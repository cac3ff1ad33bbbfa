package pages

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func mustParse(t testing.TB, s string) Spec {
	t.Helper()
	spec, err := ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestGenerate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "page") // parents are created
	spec := mustParse(t, "3x398B,2x1KB,1x70KB,1x1MB")
	m, err := Generate(dir, spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	if m.Spec != "3x398B,2x1KB,1x70KB,1x1MB" || m.Items != m.Spec || m.Seed != 7 || m.Index != IndexPath ||
		m.TotalBytes != spec.TotalBytes() || len(m.Objects) != 7 {
		t.Fatalf("manifest %+v", m)
	}
	if read, err := ReadManifest(dir); err != nil || !reflect.DeepEqual(read, m) {
		t.Fatalf("ReadManifest = %+v, %v; want %+v", read, err, m)
	}
	want := []string{"img/0001.jpg", "img/0002.jpg", "img/0003.jpg", "img/0004.jpg", "img/0005.jpg", "img/0006.jpg", "img/0007.jpg", "index.html", "manifest.json"}
	if got := listFiles(t, dir); !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	checkObjects(t, dir, m, spec.sizes())
	checkHTML(t, dir, m)
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("leftovers beside the page: %v", entries)
	}
}

// checkObjects decodes every object of m from dir and checks its size, digest and dimensions.
func checkObjects(t *testing.T, dir string, m *Manifest, sizes []int64) {
	t.Helper()
	var total int64
	for i, o := range m.Objects {
		b, err := os.ReadFile(filepath.Join(dir, o.Path))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if o.Size != sizes[i] || hex.EncodeToString(sum[:]) != o.SHA256 || o.Path != objectPath(i, len(sizes)) {
			t.Errorf("object %d: %+v, file %d bytes sha256 %x, want size %d", i, o, len(b), sum, sizes[i])
		}
		if o.Width != o.Height || o.Width != coreFor(o.Size).side {
			t.Errorf("object %s is %dx%d", o.Path, o.Width, o.Height)
		}
		checkJPEG(t, b, o.Size, o.Width)
		total += o.Size
	}
	if total != m.TotalBytes {
		t.Errorf("objects total %d bytes, manifest says %d", total, m.TotalBytes)
	}
}

// checkHTML checks that index.html references exactly the objects, with sizes, and nothing else.
func checkHTML(t *testing.T, dir string, m *Manifest) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.HasPrefix(page, "<!DOCTYPE html>\n") || !strings.Contains(page, `<link rel="icon" href="data:,">`) {
		t.Errorf("index.html lacks doctype or data: icon:\n%s", page)
	}
	for _, bad := range []string{"<script", "<style", "stylesheet", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	if n := strings.Count(page, "<img "); n != len(m.Objects) {
		t.Errorf("%d <img> elements, want %d", n, len(m.Objects))
	}
	for _, o := range m.Objects {
		tag := `<img src="` + o.Path + `" width="` + strconv.Itoa(o.Width) + `" height="` + strconv.Itoa(o.Height) + `" alt="">`
		if !strings.Contains(page, tag) {
			t.Errorf("index.html lacks %s", tag)
		}
	}
}

// listFiles lists the regular files below dir, slash-separated and sorted.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// readTree reads every file below dir into a map keyed by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range listFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = b
	}
	return out
}

func TestGenerateDeterministic(t *testing.T) {
	spec := mustParse(t, "4x2KB,1x200KB,2x398B")
	gen := func(seed int64) map[string][]byte {
		dir := filepath.Join(t.TempDir(), "p")
		if _, err := Generate(dir, spec, seed); err != nil {
			t.Fatal(err)
		}
		return readTree(t, dir)
	}
	a, b, c := gen(5), gen(5), gen(6)
	if !reflect.DeepEqual(a, b) {
		t.Error("same spec and seed gave different files")
	}
	for name, data := range a {
		// Objects differ by their padding; minimum-size ones have none and are all alike.
		if strings.HasPrefix(name, "img/") && len(data) > int(MinObjectSize)+16 && (bytes.Equal(data, c[name]) || len(data) != len(c[name])) {
			t.Errorf("%s: seeds 5 and 6 should give different bytes of the same size", name)
		}
	}
}

// TestGolden pins the generator's output: manifest.json holds every object's sha256, so any change
// of any byte shows. Regenerate with: go test ./pages -run TestGolden -update
func TestGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if _, err := Generate(dir, mustParse(t, "2x398B,1x5KB,1x70KB,1x1MiB"), 42); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "index.html"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (if intended, run with -update):\n%s", name, golden, got)
		}
	}
}

func TestGenerateOutDir(t *testing.T) {
	spec := mustParse(t, "2x1KB")
	other := mustParse(t, "1x2KB")
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		spec    Spec
		replace bool
		wantErr error // nil: success
	}{
		{"absent", func(*testing.T, string) {}, spec, false, nil},
		{"empty", func(t *testing.T, dir string) { mkdir(t, dir) }, spec, false, nil},
		{"same page again", func(t *testing.T, dir string) { gen(t, dir, spec) }, spec, false, nil},
		{"other page", func(t *testing.T, dir string) { gen(t, dir, other) }, spec, false, ErrDirNotEmpty},
		{"other page replaced", func(t *testing.T, dir string) { gen(t, dir, other) }, spec, true, nil},
		{"not a page", func(t *testing.T, dir string) { mkdir(t, dir); touch(t, filepath.Join(dir, "keep")) }, spec, false, ErrDirNotEmpty},
		{"not a page, replace", func(t *testing.T, dir string) { mkdir(t, dir); touch(t, filepath.Join(dir, "keep")) }, spec, true, ErrDirNotEmpty},
		{"web app, replace", func(t *testing.T, dir string) { webApp(t, dir) }, spec, true, ErrDirNotEmpty},
		{"page and other files, replace", func(t *testing.T, dir string) { gen(t, dir, other); mkdir(t, filepath.Join(dir, "src")) }, spec, true, ErrDirNotEmpty},
		{"same page and other files", func(t *testing.T, dir string) { gen(t, dir, spec); touch(t, filepath.Join(dir, "notes.txt")) }, spec, false, ErrDirNotEmpty},
		{"page from a HAR replaced", func(t *testing.T, dir string) { gen(t, dir, other); touch(t, filepath.Join(dir, FromHARFile)) }, spec, true, nil},
		{"a file", func(t *testing.T, dir string) { mkdir(t, filepath.Dir(dir)); touch(t, dir) }, spec, false, ErrOutDir},
		{"parent is a file", func(t *testing.T, dir string) { touch(t, filepath.Dir(dir)) }, spec, false, ErrOutDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "parent")
			dir := filepath.Join(parent, "out")
			mkdir(t, filepath.Dir(parent))
			tt.setup(t, dir)
			before := snapshot(t, filepath.Dir(parent))
			m, err := GenerateContext(context.Background(), dir, tt.spec, 1, WithReplace(tt.replace))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line wrapping %v", err, tt.wantErr)
				}
				if after := snapshot(t, filepath.Dir(parent)); !reflect.DeepEqual(before, after) {
					t.Fatalf("files changed on error:\nbefore %v\nafter  %v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := ReadManifest(dir); got == nil || got.Items != tt.spec.String() || len(m.Objects) != 2 {
				t.Fatalf("page not in place: %+v", got)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 1 {
				t.Errorf("leftovers beside the page: %v", entries)
			}
		})
	}
}

func TestGenerateCancelled(t *testing.T) {
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := GenerateContext(ctx, filepath.Join(parent, "p"), mustParse(t, "20x1MB"), 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestGenerateInvalidSpec(t *testing.T) {
	for _, spec := range []Spec{{}, {Items: []Item{{Count: 1, Size: 100}}}, {Items: []Item{{Count: 0, Size: 1000}}}, {Items: []Item{{Count: 10001, Size: 1000}}}, {Items: []Item{{Count: 30, Size: MaxObjectSize}}}, {Items: []Item{{Count: 1, Size: 1000, Type: "gif"}}}, {Items: []Item{{Count: 1, Size: 100, Type: TypeCSS}}}, {Items: []Item{{Count: 1, Size: 1000, Origin: "O1"}}}} {
		parent := t.TempDir()
		if _, err := Generate(filepath.Join(parent, "p"), spec, 1); err == nil {
			t.Errorf("Generate(%+v) succeeded", spec)
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("spec %+v left %v", spec, entries)
		}
	}
}

func TestObjectPath(t *testing.T) {
	for _, tt := range []struct {
		i, n int
		want string
	}{{0, 1, "/img/0001.jpg"}, {9998, 9999, "/img/9999.jpg"}, {0, 10000, "/img/00001.jpg"}, {9999, 10000, "/img/10000.jpg"}} {
		if got := objectPath(tt.i, tt.n); got != tt.want {
			t.Errorf("objectPath(%d, %d) = %s, want %s", tt.i, tt.n, got, tt.want)
		}
	}
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func touch(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gen(t *testing.T, dir string, spec Spec) {
	t.Helper()
	if _, err := Generate(dir, spec, 1); err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every path below root (directories included) to its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = string(b)
		return nil
	})
	return out
}

// TestStaleTempRemoved (issue 11 item 3): the hidden temporary directory a killed `pages` left
// beside DIR is removed by the next start, but not one of a live process.
func TestStaleTempRemoved(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "page")
	dead := 1 << 22 // above pid_max's default: no such process
	stale := filepath.Join(parent, tempPrefix(dir, "tmp", dead)+"123")
	live := filepath.Join(parent, tempPrefix(dir, "tmp", os.Getppid())+"456")
	for _, d := range []string{stale, live} {
		if err := os.MkdirAll(filepath.Join(d, "img"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := ParseSpec("1x1KB")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, spec, DefaultSeed); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale %s still there (err %v)", stale, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's %s was removed: %v", live, err)
	}
}

// webApp makes dir a web app's directory: a manifest.json of the Web App Manifest kind and
// src/ (issue 50 item 2).
func webApp(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"name":"App"}`), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadManifestRefusesOtherManifests (issue 50 item 2): a manifest.json pltlab did not write
// is not a page's.
func TestReadManifestRefusesOtherManifests(t *testing.T) {
	for name, body := range map[string]string{
		"web app":        `{"name":"App","start_url":"/"}`,
		"no objects":     `{"spec":"1x1KB","items":"1x1KB","seed":1,"objects":[]}`,
		"object no sha":  `{"spec":"1x1KB","items":"1x1KB","seed":1,"objects":[{"path":"/img/1.jpg","size":1000}]}`,
		"object no path": `{"spec":"1x1KB","items":"1x1KB","seed":1,"objects":[{"size":1000,"sha256":"` + strings.Repeat("ab", 32) + `"}]}`,
		"empty JSON":     `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			if m, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "not one of a pltlab page") {
				t.Fatalf("ReadManifest = %+v, %v; want a refusal", m, err)
			}
		})
	}
}

// TestWithFile (issue 50 item 9): a file written with the page appears with it, and when its
// writing fails (a full file system) neither the page nor the file is left.
func TestWithFile(t *testing.T) {
	spec := mustParse(t, "2x1KB")
	dir := filepath.Join(t.TempDir(), "page")
	full := errors.New("no space left on device")
	_, err := GenerateContext(context.Background(), dir, spec, 1, WithFile(FromHARFile, func(w io.Writer) error {
		io.WriteString(w, "{")
		return full
	}))
	if !errors.Is(err, full) {
		t.Fatalf("err = %v, want the write's", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 0 {
		t.Fatalf("a failed write left %v", entries)
	}
	if _, err := GenerateContext(context.Background(), dir, spec, 1, WithFile(FromHARFile, func(w io.Writer) error {
		_, err := io.WriteString(w, "{}\n")
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, FromHARFile)); err != nil || string(b) != "{}\n" {
		t.Fatalf("%s: %q, %v", FromHARFile, b, err)
	}
	for _, name := range []string{"", "sub/x.json", ManifestFile, "index.html"} {
		if _, err := GenerateContext(context.Background(), filepath.Join(t.TempDir(), "p"), spec, 1, WithFile(name, func(io.Writer) error { return nil })); err == nil {
			t.Errorf("WithFile(%q) accepted", name)
		}
	}
}
