package pages

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ManifestFile is the name of the manifest written beside index.html in a page directory.
const ManifestFile = "manifest.json"

// FromHARFile is the file a page derived from a HAR holds beside its manifest ('pltlab pages
// --from-har FILE --out DIR'): the HAR's path, the seed and the HARShape.
const FromHARFile = "from-har.json"

// IndexPath is the URL path of the generated page.
const IndexPath = "/index.html"

// Manifest describes a generated page directory: what was asked for and every object's size and
// digest, so that a server can serve it and a browser run can verify what arrived.
type Manifest struct {
	// Spec is the page SPEC the directory was generated from (a preset name or items).
	Spec string `json:"spec"`
	// Items is the canonical form of the spec (Spec.String()), such as "30x10KB".
	Items string `json:"items"`
	// Seed is the generator seed; the same Spec and Seed give byte-identical files.
	Seed int64 `json:"seed"`
	// Index is the URL path of the HTML page (IndexPath).
	Index string `json:"index"`
	// TotalBytes is the sum of the objects' sizes in bytes (the HTML excluded).
	TotalBytes int64 `json:"total_bytes"`
	// Objects lists the page's objects in spec order (the order of the items).
	Objects []Object `json:"objects"`
}

// Object is one generated object of a page.
type Object struct {
	// Path is the object's URL path, starting with "/"; the file is Path below the page directory.
	Path string `json:"path"`
	// Size is the object's exact size in bytes.
	Size int64 `json:"size"`
	// SHA256 is the lowercase hex SHA-256 of the object's bytes.
	SHA256 string `json:"sha256"`
	// Width and Height are an image's pixel dimensions, also written on the <img> element;
	// absent (0) for other types.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Type is the object's type (ObjectType); absent ("") for an image, so that image-only
	// manifests read as they always did.
	Type ObjectType `json:"type,omitempty"`
	// Origin is the hostname of the origin that serves the object (OriginHost, such as
	// "o1.p1a2b3c4d.plt.test"), at https://ORIGIN/PATH; absent ("") for the page's own origin.
	Origin string `json:"origin,omitempty"`
	// Depth is a fetched object's dependency depth: 1 for TypeFetch and a chain's first object,
	// K for a chain's K-th; absent (0) for other types.
	Depth int `json:"depth,omitempty"`
	// Frame is the path of the iframe that holds the object (referenced by the iframe's
	// document, on its origin: Origin is the iframe's); absent for the page's own objects.
	Frame string `json:"frame,omitempty"`
}

// URL returns the object's URL as the page references it: its Path on the page's own origin,
// else "https://ORIGIN" + Path.
func (o Object) URL() string {
	if o.Origin == "" {
		return o.Path
	}
	return "https://" + o.Origin + o.Path
}

// OriginHosts returns the hostnames of the page's other origins (Object.Origin), each once, in
// order of first use; nil when every object is on the page's origin.
func (m *Manifest) OriginHosts() []string {
	var out []string
	for _, o := range m.Objects {
		if o.Origin != "" && !slices.Contains(out, o.Origin) {
			out = append(out, o.Origin)
		}
	}
	return out
}

// ReadManifest reads DIR/manifest.json. It returns an error naming the file when it is missing or
// not a manifest of a page pltlab generated (a spec and at least one object, each
// with a URL path and a SHA-256): another program's manifest.json, such as a web app's, is
// not one.
func ReadManifest(dir string) (*Manifest, error) {
	name := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read page manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse page manifest %s: %w", name, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("page manifest %s: not one of a pltlab page: %w", name, err)
	}
	m.Index = cmp.Or(m.Index, IndexPath)
	return &m, nil
}

// check refuses a manifest that pltlab did not write: no spec, no object, or an
// object without a URL path or a hex SHA-256.
func (m *Manifest) check() error {
	if m.Spec == "" {
		return errors.New(`no "spec"`)
	}
	if len(m.Objects) == 0 {
		return errors.New(`no "objects"`)
	}
	for i, o := range m.Objects {
		if _, err := hex.DecodeString(o.SHA256); !strings.HasPrefix(o.Path, "/") || len(o.SHA256) != 64 || err != nil {
			return fmt.Errorf("object %d has no URL path or SHA-256", i+1)
		}
	}
	return nil
}

// entries returns the names a page directory of m holds at its top: the manifest, the index
// page, the top directory (or file) of every object and FromHARFile.
func (m *Manifest) entries() map[string]bool {
	names := map[string]bool{ManifestFile: true, FromHARFile: true, topName(cmp.Or(m.Index, IndexPath)): true}
	for _, o := range m.Objects {
		names[topName(o.Path)] = true
	}
	return names
}

// topName is the first segment of URL path p ("/img/0001.jpg" gives "img").
func topName(p string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return first
}
