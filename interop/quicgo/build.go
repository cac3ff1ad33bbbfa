// Package quicgo builds the interop endpoint (a small HTTP/3 server and client program) with any
// quic-go release from v0.33.0 to v0.66.x, fetched from the Go module proxy into a cache, so
// that the interop matrix can measure quic-go's history and not only the release pltlab links.
// One endpoint source covers every release through thin adapters per API era (Eras); releases
// that need an older Go (the qtls forks before Go's own QUIC API) are built with the newest
// patch of the Go release their qtls fork supports, fetched by the go command as a toolchain
// module (GOTOOLCHAIN). Each build is recorded (Endpoint: release, era, toolchain, module hash,
// binary digest, build time) and a release that does not build is one error line.
package quicgo

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Module is quic-go's module path.
const Module = "github.com/quic-go/quic-go"

// Oldest and Newest bound the releases Build accepts: the history the module proxy serves here.
const (
	Oldest = "v0.33.0"
	Newest = "v0.66.99"
)

// Endpoint is one built endpoint, as recorded beside its binary (build.json) and in every interop
// record that used it.
type Endpoint struct {
	// Version is the quic-go release ("v0.40.1") and Era the adapter's era (Era.Name).
	Version string `json:"version"`
	Era     string `json:"era"`
	// Toolchain is the Go release that built it ("go1.26.0", or an older one fetched for a
	// qtls-era release), and Tried the toolchains that failed before it, with their last
	// compiler line.
	Toolchain string   `json:"toolchain"`
	Tried     []string `json:"tried,omitempty"`
	// Sum is the quic-go module's go.sum hash ("h1:..."), so a build names exactly what it built.
	Sum string `json:"sum"`
	// SourceSHA256 is the digest (hex) of the endpoint source it was built from (Era.Source): a
	// cached build of an older source is built again.
	SourceSHA256 string `json:"source_sha256"`
	// Binary is the endpoint's path and BinarySHA256 its digest (hex).
	Binary       string `json:"binary"`
	BinarySHA256 string `json:"binary_sha256"`
	// BuildS is how long the build took, in seconds (of the build that made the cached binary).
	BuildS float64 `json:"build_s"`
	// Cached is true when Build found the binary in the cache (not written to build.json).
	Cached bool `json:"-"`
}

// Options configures Build.
type Options struct {
	// Cache is the directory of built endpoints, one subdirectory per release; default
	// $XDG_CACHE_HOME/pltlab/quic-go (os.UserCacheDir).
	Cache string
	// Go is the go command (default "go" on PATH).
	Go string
	// Progress receives one line per step (downloading, building, built in N s); nil: none.
	Progress func(line string)
}

// ErrVersion is wrapped by Build's error for a version outside Oldest..Newest or not a release.
var ErrVersion = errors.New("bad quic-go version")

// CheckVersion returns nil for a release Build accepts ("v0.40.1"), otherwise an error wrapping
// ErrVersion naming the value and what is accepted. It needs nothing from the network.
func CheckVersion(v string) error {
	sv, err := parseSemver(v)
	lo, _ := parseSemver(Oldest)
	hi, _ := parseSemver(Newest)
	if err != nil || sv.less(lo) || hi.less(sv) {
		return fmt.Errorf("%w %q: accepted a release v0.33.0 to v0.66.x (e.g. v0.40.1)", ErrVersion, v)
	}
	return nil
}

// Build returns the endpoint built with quic-go release version, from the cache (when built
// from the same source, SourceSHA256) or built now:
// a module requiring that release, the era's endpoint source, `go mod tidy` and `go build`,
// first with the local Go and then, if that fails, with the newest patch of the Go release
// the release's qtls fork supports (Toolchains). The build happens in a temporary directory
// renamed into place only when complete, so a failed or interrupted build leaves nothing.
// Errors: a bad version (ErrVersion), a release the proxy does not serve, or one no toolchain
// builds ("quic-go v0.33.0 does not build: go1.26.0: ...; go1.20.14: ..."); ctx ends it.
func Build(ctx context.Context, version string, o Options) (Endpoint, error) {
	if err := CheckVersion(version); err != nil {
		return Endpoint{}, err
	}
	era, _ := EraOf(version)
	o = o.withDefaults()
	src, err := era.Source()
	if err != nil {
		return Endpoint{}, err
	}
	srcSum := sha256.Sum256(src)
	dir := filepath.Join(o.Cache, version)
	if b, err := readBuild(dir); err == nil && b.SourceSHA256 == hex.EncodeToString(srcSum[:]) {
		b.Cached = true
		return b, nil
	}
	if err := os.MkdirAll(o.Cache, 0o755); err != nil {
		return Endpoint{}, fmt.Errorf("quic-go cache: %w", err)
	}
	work, err := os.MkdirTemp(o.Cache, ".build-"+version+"-")
	if err != nil {
		return Endpoint{}, fmt.Errorf("quic-go cache: %w", err)
	}
	defer os.RemoveAll(work)
	gomod := fmt.Sprintf("module pltlab.local/interop-endpoint\n\ngo 1.19\n\nrequire %s %s\n", Module, version)
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte(gomod), 0o644); err != nil {
		return Endpoint{}, err
	}
	if err := os.WriteFile(filepath.Join(work, "main.go"), src, 0o644); err != nil {
		return Endpoint{}, err
	}
	o.progress("quic-go %s: fetching the module (era %s)", version, era.Name)
	qmod, err := o.goOut(ctx, work, "local", "mod", "download", "-json", Module+"@"+version)
	if err != nil {
		return Endpoint{}, fmt.Errorf("quic-go %s: the module proxy does not serve it: %w", version, err)
	}
	var info struct{ GoMod, Sum string }
	if err := json.Unmarshal(qmod, &info); err != nil {
		return Endpoint{}, fmt.Errorf("quic-go %s: go mod download: %w", version, err)
	}
	qgomod, _ := os.ReadFile(info.GoMod)
	toolchains, err := o.toolchains(ctx, work, qgomod)
	if err != nil {
		return Endpoint{}, err
	}
	b := Endpoint{Version: version, Era: era.Name, Sum: info.Sum, SourceSHA256: hex.EncodeToString(srcSum[:])}
	start := time.Now()
	for _, tc := range toolchains {
		o.progress("quic-go %s: building with %s", version, tc)
		if _, err = o.goOut(ctx, work, tc, "mod", "tidy"); err == nil {
			_, err = o.goOut(ctx, work, tc, "build", "-trimpath", "-o", "endpoint", ".")
		}
		if ctx.Err() != nil {
			return Endpoint{}, ctx.Err()
		}
		if err == nil {
			b.Toolchain = tc
			break
		}
		b.Tried = append(b.Tried, tc+": "+lastLine(err.Error()))
	}
	if b.Toolchain == "" {
		return Endpoint{}, fmt.Errorf("quic-go %s does not build: %s", version, strings.Join(b.Tried, "; "))
	}
	if tc, err := o.goOut(ctx, work, b.Toolchain, "env", "GOVERSION"); err == nil {
		b.Toolchain = strings.TrimSpace(string(tc))
	}
	b.BuildS = time.Since(start).Seconds()
	bin := filepath.Join(work, "endpoint")
	if b.BinarySHA256, err = fileSHA256(bin); err != nil {
		return Endpoint{}, err
	}
	b.Binary = filepath.Join(dir, "endpoint")
	j, _ := json.MarshalIndent(b, "", "  ")
	if err := os.WriteFile(filepath.Join(work, "build.json"), j, 0o644); err != nil {
		return Endpoint{}, err
	}
	os.RemoveAll(dir) // a leftover of an older layout, or a build of an older source
	if err := os.Rename(work, dir); err != nil {
		return Endpoint{}, fmt.Errorf("quic-go cache: %w", err)
	}
	o.progress("quic-go %s: built with %s in %.1f s", version, b.Toolchain, b.BuildS)
	return b, nil
}

func (o Options) withDefaults() Options {
	if o.Cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		o.Cache = filepath.Join(base, "pltlab", "quic-go")
	}
	if o.Go == "" {
		o.Go = "go"
	}
	return o
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// goOut runs the go command in dir with GOTOOLCHAIN=toolchain ("local" or "go1.20.14") and
// returns its standard output; the error carries its standard error.
func (o Options) goOut(ctx context.Context, dir, toolchain string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, o.Go, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN="+toolchain, "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// qtlsRe finds the qtls forks a quic-go release requires ("github.com/quic-go/qtls-go1-20").
var qtlsRe = regexp.MustCompile(`github\.com/(?:quic-go|marten-seemann)/qtls-go1-(\d+)`)

// toolchains returns the GOTOOLCHAIN values to try for a release whose go.mod is gomod:
// "local" first, then, for a release with qtls forks, the newest patch of the newest Go release
// a fork supports (Go 1.N for qtls-go1-N; the forks refuse any other Go), as the proxy lists it.
func (o Options) toolchains(ctx context.Context, dir string, gomod []byte) ([]string, error) {
	out := []string{"local"}
	minor := 0
	for _, m := range qtlsRe.FindAllSubmatch(gomod, -1) {
		if n, err := strconv.Atoi(string(m[1])); err == nil {
			minor = max(minor, n)
		}
	}
	if minor == 0 {
		return out, nil
	}
	list, err := o.goOut(ctx, dir, "local", "list", "-m", "-versions", "golang.org/toolchain")
	if err != nil {
		return out, nil // the local Go is tried alone; its failure says why
	}
	if tc := newestPatch(string(list), minor); tc != "" {
		out = append(out, tc)
	}
	return out, nil
}

// newestPatch picks from `go list -m -versions golang.org/toolchain` output the newest
// "goX.minor.P" release for linux/amd64 ("go1.20.14"), "" when none.
func newestPatch(list string, minor int) string {
	best, bestP := "", -1
	re := regexp.MustCompile(`^v0\.0\.1-go1\.` + strconv.Itoa(minor) + `\.(\d+)\.linux-amd64$`)
	for _, f := range strings.Fields(list) {
		if m := re.FindStringSubmatch(f); m != nil {
			if p, _ := strconv.Atoi(m[1]); p > bestP {
				best, bestP = fmt.Sprintf("go1.%d.%d", minor, p), p
			}
		}
	}
	return best
}

// readBuild reads a cached build's build.json and checks its binary is still the one recorded.
func readBuild(dir string) (Endpoint, error) {
	j, err := os.ReadFile(filepath.Join(dir, "build.json"))
	if err != nil {
		return Endpoint{}, err
	}
	var b Endpoint
	if err := json.Unmarshal(j, &b); err != nil {
		return Endpoint{}, err
	}
	sum, err := fileSHA256(b.Binary)
	if err != nil || sum != b.BinarySHA256 {
		return Endpoint{}, fmt.Errorf("cached endpoint %s changed or missing", b.Binary)
	}
	return b, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lastLine is the last non-empty line of s (a compiler's error).
func lastLine(s string) string {
	var last string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			last = t
		}
	}
	return last
}

// semver is a release's major, minor and patch numbers.
type semver [3]int

var semverRe = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)$`)

func parseSemver(v string) (semver, error) {
	m := semverRe.FindStringSubmatch(v)
	if m == nil {
		return semver{}, fmt.Errorf("%q is not a release version vX.Y.Z", v)
	}
	var s semver
	for i := range 3 {
		s[i], _ = strconv.Atoi(m[i+1])
	}
	return s, nil
}

func (a semver) less(b semver) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
