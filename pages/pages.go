// Package pages parses page specs and generates deterministic test pages of exact-size typed objects.
package pages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultSeed is the generator seed used when none is given.
const DefaultSeed int64 = 1

// ErrOutDir marks an output directory that cannot be used: not a directory, not creatable or
// not writable, or (ErrDirNotEmpty) holding other files. Nothing has been written when it is returned.
var ErrOutDir = errors.New("unusable output directory")

// ErrDirNotEmpty marks an output directory that already holds files; errors.Is also matches ErrOutDir.
var ErrDirNotEmpty = errors.New("output directory not empty")

// outDirError is a one-line error about the output directory that matches ErrOutDir (and
// ErrDirNotEmpty when notEmpty) and wraps the underlying error, if any.
type outDirError struct {
	msg      string
	notEmpty bool
	err      error
}

func (e *outDirError) Error() string { return e.msg }
func (e *outDirError) Unwrap() error { return e.err }
func (e *outDirError) Is(target error) bool {
	return target == ErrOutDir || e.notEmpty && target == ErrDirNotEmpty
}

// outDirErr wraps err (not nil) about output directory dir.
func outDirErr(dir string, err error) error {
	return &outDirError{msg: fmt.Sprintf("cannot use output directory %s: %v", dir, err), err: err}
}

// Option changes how GenerateContext writes a page directory.
type Option func(*options)

type options struct {
	replace bool
	files   []extraFile
}

// extraFile is a file written into the page directory beside the page (WithFile).
type extraFile struct {
	name  string
	write func(io.Writer) error
}

// WithFile makes GenerateContext write the file name (a plain file name, such as FromHARFile)
// with write into the page directory before it is renamed into place: the page and the file
// appear together or, when write or the file system fails, not at all.
func WithFile(name string, write func(io.Writer) error) Option {
	return func(o *options) { o.files = append(o.files, extraFile{name, write}) }
}

// WithReplace(true) lets GenerateContext replace a directory that holds an earlier page (a
// manifest.json pltlab wrote, ReadManifest, and that page's files only); any other non-empty
// directory is still refused, so a mistyped path is never wiped.
func WithReplace(replace bool) Option { return func(o *options) { o.replace = replace } }

// Generate writes the page for spec into dir: index.html, manifest.json and the objects under img/
// (URL paths /img/0001.jpg ... in document order). It is GenerateContext without cancellation or options.
func Generate(dir string, spec Spec, seed int64) (*Manifest, error) {
	return GenerateContext(context.Background(), dir, spec, seed)
}

// GenerateContext writes the page for spec and seed into dir and returns its manifest. The same
// spec and seed always give byte-identical files. dir must be absent, empty, or hold a page
// generated from the same spec and seed (the result is then identical); WithReplace(true) also
// allows replacing another page. Missing parent directories are created. The page is written into
// a temporary directory beside dir and renamed into place, so on an error or when ctx is
// cancelled nothing half-written is left behind. Errors about dir wrap ErrOutDir (ErrDirNotEmpty
// when it holds other files); an invalid spec (one not from ParseSpec) is an error too.
func GenerateContext(ctx context.Context, dir string, spec Spec, seed int64, opts ...Option) (*Manifest, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if err := validate(spec); err != nil {
		return nil, err
	}
	if err := checkOutDir(dir, spec, seed, o.replace); err != nil {
		return nil, err
	}
	tmp, err := makeTemp(dir, "tmp")
	if err != nil {
		return nil, err
	}
	m, err := writePage(ctx, tmp, spec, seed)
	for _, f := range o.files {
		if err == nil {
			err = writeExtra(tmp, f)
		}
	}
	if err == nil {
		err = install(tmp, dir)
	}
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(tmp))
	}
	return m, nil
}

// writeExtra writes f into the page directory dir (not yet in place).
func writeExtra(dir string, f extraFile) error {
	if f.name == "" || f.name != filepath.Base(f.name) || f.name == ManifestFile {
		return fmt.Errorf("write %q beside the page: accepted a plain file name other than %s", f.name, ManifestFile)
	}
	out, err := os.OpenFile(filepath.Join(dir, f.name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s beside the page: %w", f.name, err)
	}
	err = f.write(out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s beside the page: %w", f.name, err)
	}
	return nil
}

// validate checks a spec built by hand the way ParseSpec checks parsed ones.
func validate(spec Spec) error {
	if len(spec.Items) == 0 {
		return fmt.Errorf("empty page spec; %s", acceptedSpec)
	}
	if err := validateItems(spec, spec.Items, nil); err != nil {
		return err
	}
	return checkLimits(spec)
}

// validateItems checks items of spec; in is the iframe item that holds them (nil at the top).
func validateItems(spec Spec, items []Item, in *Item) error {
	for _, it := range items {
		if in != nil && (it.Origin != "" || len(it.Frame) > 0 || !slices.Contains(FrameTypes, it.Type.canonical())) {
			return fmt.Errorf("bad item %s in iframe item %s of page spec %q; accepted in an iframe: items of type %s without origins", it, *in, spec.String(), frameTypeNames())
		}
		if len(it.Frame) > 0 {
			if it.Type != TypeIframe || it.Size < frameMinSize(it.Frame) {
				return fmt.Errorf("bad item %s of page spec %q: only iframes of at least %d B hold these objects", it, spec.String(), frameMinSize(it.Frame))
			}
			if err := validateItems(spec, it.Frame, &it); err != nil {
				return err
			}
		}
		if _, ok := parseType(string(it.Type)); !ok && it.Type != "" {
			return fmt.Errorf("unknown object type %q in page spec %q; accepted: %s", it.Type, spec.String(), typeNames())
		}
		if it.Origin != "" && !validOrigin(it.Origin) {
			return fmt.Errorf("bad origin %q in page spec %q; accepted: a label such as o1", it.Origin, spec.String())
		}
		if it.Count < 1 || it.Count > MaxObjects {
			return fmt.Errorf("bad count %d in page spec %q; accepted: 1 to %d", it.Count, spec.String(), MaxObjects)
		}
		if it.Size < it.Type.MinSize() || it.Size > MaxObjectSize {
			return fmt.Errorf("bad size %d B in page spec %q; accepted: %d B to 50MB", it.Size, spec.String(), it.Type.MinSize())
		}
	}
	return nil
}

// checkOutDir decides whether dir may receive the page, before anything is written.
func checkOutDir(dir string, spec Spec, seed int64, replace bool) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return outDirErr(dir, err)
	}
	if !fi.IsDir() {
		return &outDirError{msg: fmt.Sprintf("output directory %s is not a directory", dir)}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return outDirErr(dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	old, err := ReadManifest(dir)
	if err != nil {
		return &outDirError{notEmpty: true, msg: fmt.Sprintf(
			"output directory %s is not empty and holds no page (%s is missing or not a pltlab page's); remove it or choose another directory",
			dir, ManifestFile)}
	}
	known := old.entries()
	for _, e := range entries {
		if !known[e.Name()] {
			return &outDirError{notEmpty: true, msg: fmt.Sprintf(
				"output directory %s holds a page and %s, which is not the page's; remove it or choose another directory", dir, e.Name())}
		}
	}
	if replace || (old.Items == spec.String() && old.Seed == seed) {
		return nil
	}
	return &outDirError{notEmpty: true, msg: fmt.Sprintf(
		"output directory %s holds another page (spec %s, seed %d); use --force to replace it", dir, old.Spec, old.Seed)}
}

// tempPrefix is the name start of a temporary directory of process pid beside dir:
// ".BASE.KIND-PID-" (the pid lets a later start tell a leftover of a killed process).
func tempPrefix(dir, kind string, pid int) string {
	return "." + filepath.Base(dir) + "." + kind + "-" + strconv.Itoa(pid) + "-"
}

// removeStale removes the temporary directories beside dir left by pltlab processes that are
// gone (killed while writing a page): ".BASE.tmp-PID-*" are removed; ".BASE.old-PID-*" (a page
// moved aside while being replaced) is moved back when dir is missing, else removed.
func removeStale(dir string) {
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "."+base+".")
		if !ok || !e.IsDir() {
			continue
		}
		kind, rest, _ := strings.Cut(rest, "-")
		digits, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if err != nil || pid <= 0 || pid == os.Getpid() || (kind != "tmp" && kind != "old") || !processGone(pid) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if _, err := os.Lstat(dir); kind == "old" && errors.Is(err, os.ErrNotExist) {
			os.Rename(path, dir)
			continue
		}
		os.RemoveAll(path)
	}
}

// dir's parents as needed.
func makeTemp(dir, kind string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", outDirErr(dir, err)
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", outDirErr(dir, err)
	}
	removeStale(abs)
	tmp, err := os.MkdirTemp(parent, tempPrefix(abs, kind, os.Getpid()))
	if err != nil {
		return "", outDirErr(dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", errors.Join(outDirErr(dir, err), os.Remove(tmp))
	}
	return tmp, nil
}

// install renames the finished page directory tmp to dir, replacing an empty dir or an earlier
// page. (os.Rename refuses an existing directory as target, even an empty one.)
func install(tmp, dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		if err := os.Remove(dir); err == nil { // it was empty
			return rename(tmp, dir)
		}
		return replaceDir(tmp, dir)
	}
	return rename(tmp, dir)
}

// replaceDir moves the page in dir aside, moves tmp into its place and removes the old page.
func replaceDir(tmp, dir string) error {
	old, err := makeTemp(dir, "old")
	if err != nil {
		return err
	}
	if err := os.Remove(old); err != nil { // only its unique name is needed
		return fmt.Errorf("move old page %s aside: %w", dir, err)
	}
	if err := os.Rename(dir, old); err != nil {
		return fmt.Errorf("move old page %s aside: %w", dir, err)
	}
	if err := rename(tmp, dir); err != nil {
		return errors.Join(err, os.Rename(old, dir))
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("remove old page %s: %w", old, err)
	}
	return nil
}

func rename(tmp, dir string) error {
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("move page into %s: %w", dir, err)
	}
	return nil
}
