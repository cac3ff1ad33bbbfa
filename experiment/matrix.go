package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// Matrix is the YAML form of an experiment (`pltlab run --matrix FILE.yaml`). Every key is
// optional except pages and links; unknown keys are errors. Example:
//
//	name: carlucci-grid         # experiment name in every record
//	pages: [carlucci2015, 10x30KB]
//	links: [carlucci2015, "rate=10mbit,rtt=100ms,queue=1bdp"]
//	protocols: [h1, h2, h3]     # default all three
//	modes: [cold, warm]         # default [cold]
//	runs: 20                    # measured loads per cell, default 10
//	warmup: 1                   # warm-up loads per cell, default 1 (DefaultWarmup, as the flag)
//	timeout: 60s                # per-load deadline (Go duration), default 60s
//	seed: 1                     # order and loss seed, default 1
//	tcp_cc: cubic               # cubic | bbr | reno, default cubic
//	tls: "1.3"                  # TCP listeners' TLS version: "1.2" | "1.3", default "1.3"
//	device: motog2013           # emulated client device (pltlab run --device), default desktop
//	h3_stack: ngtcp2            # HTTP/3 stack: quic-go | ngtcp2, default quic-go
//	quic_cc: bbr                # its congestion controller (ngtcp2: cubic | reno | bbr | bbr2)
type Matrix struct {
	Name      string   `yaml:"name"`
	Pages     []string `yaml:"pages"`
	Links     []string `yaml:"links"`
	Protocols []string `yaml:"protocols"`
	Modes     []string `yaml:"modes"`
	Runs      *Count   `yaml:"runs"`
	Warmup    *Count   `yaml:"warmup"`
	Timeout   string   `yaml:"timeout"`
	Seed      int64    `yaml:"seed"`
	TCPCC     string   `yaml:"tcp_cc"`
	TLS       string   `yaml:"tls"`
	Device    string   `yaml:"device"`
	H3Stack   string   `yaml:"h3_stack"`
	QUICCC    string   `yaml:"quic_cc"`
}

// ReadMatrix decodes a Matrix from r and turns it into a Config; name is the file's path, from
// whose directory relative trace:FILE paths of its links are resolved (c.Traces lists them).
// Errors name the bad key or value and what is accepted; name (the file name) prefixes them.
func ReadMatrix(r io.Reader, name string) (Config, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxMatrixBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("read matrix %s: %w", name, err)
	}
	if len(b) > MaxMatrixBytes {
		return Config{}, fmt.Errorf("matrix %s is larger than %d bytes: accepted a YAML matrix file (a few hundred bytes)", name, MaxMatrixBytes)
	}
	var m Matrix
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, fmt.Errorf("matrix %s is empty: it needs at least pages and links", name)
		}
		return Config{}, fmt.Errorf("matrix %s: %s", name, yamlMessage(err))
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("matrix %s holds more than one YAML document (a second \"---\"): accepted one matrix per file", name)
	}
	c, err := m.Config()
	if err != nil {
		return Config{}, fmt.Errorf("matrix %s: %w", name, err)
	}
	if name != "" && name != "-" {
		resolveTraces(&c, filepath.Dir(name))
	}
	return c, nil
}

// MaxMatrixBytes bounds a matrix file: a matrix is a few hundred bytes, so anything larger (a
// device such as /dev/zero, a results file given by mistake) is refused before it is read whole.
const MaxMatrixBytes = 1 << 20

// OpenMatrix reads the matrix file name (ReadMatrix): it must be a regular file of at most
// MaxMatrixBytes, or "-" for stdin (nil: stdin not accepted). Errors name the file and what
// is accepted.
func OpenMatrix(name string, stdin io.Reader) (Config, error) {
	if name == "-" {
		if stdin == nil {
			return Config{}, fmt.Errorf("matrix - (stdin): accepted a matrix file here")
		}
		return ReadMatrix(stdin, name)
	}
	st, err := os.Stat(name)
	switch {
	case err != nil:
		return Config{}, fmt.Errorf("matrix %s: %w", name, errors.Unwrap(err))
	case !st.Mode().IsRegular():
		return Config{}, fmt.Errorf("matrix %s is not a regular file: accepted a YAML matrix file", name)
	case st.Size() > MaxMatrixBytes:
		return Config{}, fmt.Errorf("matrix %s is larger than %d bytes: accepted a YAML matrix file (a few hundred bytes)", name, MaxMatrixBytes)
	}
	f, err := os.Open(name)
	if err != nil {
		return Config{}, fmt.Errorf("matrix %s: %w", name, errors.Unwrap(err))
	}
	defer f.Close()
	return ReadMatrix(f, name)
}

// Count is a whole number in a matrix (runs, warmup): YAML's 2.5 or "2" is refused, not
// truncated to 2.
type Count int

// UnmarshalYAML accepts a YAML integer only.
func (n *Count) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
		return fmt.Errorf("line %d: %s is not a whole number: accepted a count such as 20", v.Line, v.Value)
	}
	var i int
	if err := v.Decode(&i); err != nil {
		return fmt.Errorf("line %d: %s: %w", v.Line, v.Value, err)
	}
	*n = Count(i)
	return nil
}

// Config turns m into a Config, applying the documented defaults for protocols and modes.
func (m Matrix) Config() (Config, error) {
	c := Config{Name: m.Name, Pages: m.Pages, Links: m.Links, Warmup: DefaultWarmup,
		Seed: m.Seed, TCPCC: m.TCPCC, TLS: m.TLS, Device: m.Device,
		H3Stack: m.H3Stack, QUICCC: m.QUICCC}
	if m.Warmup != nil {
		c.Warmup = int(*m.Warmup)
	}
	if m.Runs != nil {
		if *m.Runs < 1 {
			return Config{}, fmt.Errorf("bad runs %d: accepted 1..100000", *m.Runs)
		}
		c.Runs = int(*m.Runs)
	}
	protocols := m.Protocols
	if len(protocols) == 0 {
		protocols = protocol.Names()
	}
	var modes []result.Mode
	for _, s := range m.Modes {
		mode, err := ParseMode(s)
		if err != nil {
			return Config{}, err
		}
		modes = append(modes, mode)
	}
	if len(modes) == 0 {
		modes = []result.Mode{result.Cold}
	}
	c.Arms = CrossArms(protocols, modes)
	if m.Timeout != "" {
		d, err := time.ParseDuration(m.Timeout)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("bad timeout %q: accepted a Go duration such as 60s", m.Timeout)
		}
		c.Timeout = d
	}
	return c, c.Validate()
}

// MatrixKeys are the keys a matrix file accepts.
var MatrixKeys = []string{"name", "pages", "links", "protocols", "modes", "runs", "warmup", "timeout", "seed", "tcp_cc", "tls", "device", "h3_stack", "quic_cc"}

var unknownFieldRE = regexp.MustCompile(`field (\S+) not found in type \S+`)
var yamlTypeRE = regexp.MustCompile(`into (\*?(?:\[\])?\*?[a-z]+(?:\.[A-Za-z0-9]+)?)`)

// yamlTypeWords names the Go types of Matrix's fields as a matrix file's author knows them.
var yamlTypeWords = map[string]string{
	"int": "a whole number", "*int": "a whole number", "int64": "a whole number",
	"string": "a string", "[]string": "a list such as [a, b]", "experiment.Matrix": "a matrix of key: value lines",
}

// yamlMessage rewrites a YAML decoding error without Go internals, on one line:
// "line 3: unknown key "runz": accepted name, pages, ...".
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = unknownFieldRE.ReplaceAllString(msg, `unknown key "$1": accepted `+strings.Join(MatrixKeys, ", "))
	msg = yamlTypeRE.ReplaceAllStringFunc(msg, func(m string) string {
		if w, ok := yamlTypeWords[strings.TrimPrefix(m, "into ")]; ok {
			return "where " + w + " is accepted"
		}
		return "where another type is accepted"
	})
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

// Trace is a trace file a link spec names (LINK key down=, up= or rate= with trace:FILE).
type Trace struct {
	// Written is the path as the matrix or flag gave it; Path is where it is read from.
	Written, Path string
}

// MatrixTraces returns the trace files c's links name (ReadMatrix records them), in order,
// without repeats.
func MatrixTraces(c Config) []Trace { return c.Traces }

// resolveTraces rewrites every relative trace:FILE of c's links to dir/FILE (a matrix's trace
// paths are relative to the matrix file, not to the working directory) and records each in
// c.Traces.
func resolveTraces(c *Config, dir string) {
	seen := map[string]bool{}
	for i, l := range c.Links {
		items := strings.Split(l, ",")
		for k, item := range items {
			key, val, ok := strings.Cut(strings.TrimSpace(item), "=")
			if !ok {
				continue
			}
			path, ok := strings.CutPrefix(val, "trace:")
			if !ok {
				continue
			}
			full := path
			if !filepath.IsAbs(path) {
				full = filepath.Join(dir, path)
			}
			items[k] = key + "=trace:" + full
			if !seen[path] {
				seen[path] = true
				c.Traces = append(c.Traces, Trace{Written: path, Path: full})
			}
		}
		c.Links[i] = strings.Join(items, ",")
	}
}
