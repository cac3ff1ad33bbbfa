package view

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// maxScan bounds the entries a scan of the roots visits (a root like / is cut off there).
const maxScan = 200000

// Set is one result set: a results file, or the shard files of one sharded run (same directory,
// same configuration hash) merged.
type Set struct {
	// ID names the set in URLs: the first 12 hex digits of the SHA-256 of its first file's path.
	ID string
	// Name is its first file's path relative to the root it was found under.
	Name string
	// Files are its files (absolute, symlinks resolved), in name order.
	Files []string
	// Shards is the number of shard files merged (0 for an unsharded file).
	Shards int
	// ConfigHash is the configuration hash of its first record ("" in older records).
	ConfigHash string
	// TooLarge is set when a file exceeds the size limit: the reason it is not read.
	TooLarge string
}

// scan finds the result sets under the roots and indexes every regular file (for artifact
// lookup). A .jsonl file is a result set when its first line is a record of result.Version;
// NetLog load indexes (*.loads.jsonl) are evidence, not results.
func (s *Server) scan() ([]*Set, []string) {
	var files []string
	var found []string
	seen := map[string]bool{}
	var cut []string
	for _, root := range s.roots {
		n := 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if n++; n > maxScan {
				if !slices.Contains(cut, root) {
					cut = append(cut, root)
				}
				return filepath.SkipAll
			}
			if err != nil {
				return filepath.SkipDir
			}
			if d.IsDir() {
				if p != root && (strings.HasPrefix(d.Name(), ".") || loadDirRE.MatchString(d.Name())) {
					return filepath.SkipDir // a load's evidence folder holds no result set (resolveArtifact finds its files)
				}
				return nil
			}
			real, ok := s.inside(p)
			if !ok || seen[real] {
				return nil
			}
			seen[real] = true
			files = append(files, real)
			if (p == root || strings.HasSuffix(p, ".jsonl")) && !strings.HasSuffix(p, ".loads.jsonl") {
				found = append(found, real)
			}
			return nil
		})
	}
	slices.Sort(found)
	s.mu.Lock()
	s.cut = cut
	s.mu.Unlock()
	return s.groupSets(found), files
}

// loadDirRE matches the evidence folder of one load (artifacts.LoadDir: run-0006, or run-0006.2
// for a later attempt), which the scan for result sets does not enter.
var loadDirRE = regexp.MustCompile(`^run-[0-9]{4,}(\.[0-9]+)?$`)

// scanCut returns the index's note on roots whose scan stopped at maxScan entries ("" when
// none did): the sets beyond were not found.
func (s *Server) scanCut() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cut) == 0 {
		return ""
	}
	return fmt.Sprintf("the scan of %s stopped after %d entries: result sets beyond them are not listed; serve a smaller directory", strings.Join(s.cut, ", "), maxScan)
}

// inside resolves p's symlinks and returns the real path when it is a regular file under one of
// the roots; a link out of the tree, or to something else than a file, is not served.
func (s *Server) inside(p string) (string, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	for _, r := range s.roots {
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) {
			return real, true
		}
	}
	return "", false
}

// firstLine is what a file's first record says about the set it belongs to: a sharded run's
// first line is its plan line, a study shard's names the study and scale (Plan.Study
// "STUDY/SCALE") with its --runs and --seed.
type firstLine struct {
	V          int    `json:"v"`
	Kind       string `json:"kind"`
	Experiment string `json:"experiment"`
	Shard      string `json:"shard"`
	ConfigHash string `json:"config_hash"`
	Plan       *struct {
		Study string `json:"study"`
		Runs  int    `json:"runs"`
		Seed  int64  `json:"seed"`
	} `json:"plan"`
}

// shardKey is the key of the sharded run a file whose first line is fl belongs to ("" for a
// file that is no shard): a run's shards share their directory and configuration hash; a
// study's shards (each in a directory of its own under one directory, or side by side in one)
// share the directory above their own, the study and scale, --runs, --seed and the count of
// shards.
func shardKey(f string, fl firstLine) string {
	switch {
	case fl.Shard == "":
		return ""
	case fl.ConfigHash != "":
		return filepath.Dir(f) + "\x00" + fl.ConfigHash
	case fl.Kind == string(result.KindPlan) && fl.Plan != nil && fl.Plan.Study != "":
		_, count, _ := strings.Cut(fl.Shard, "/")
		return fmt.Sprintf("%s\x00study %s runs %d seed %d shards %s", filepath.Dir(filepath.Dir(f)), fl.Plan.Study, fl.Plan.Runs, fl.Plan.Seed, count)
	}
	return ""
}

// peekLines is how many lines peek reads at most to find a file's first record.
const peekLines = 16

// peek reads the first record of path: the first of its first peekLines lines (each up to
// result.MaxLineBytes) that is a JSON object. Empty and corrupt lines before it (a cut-short
// line of a killed run, then resumed) are skipped, as analysis.Read skips them with a warning
// that the set's page shows; the file is a result set when that record is of result.Version.
func peek(path string) (firstLine, bool) {
	f, err := os.Open(path)
	if err != nil {
		return firstLine{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), result.MaxLineBytes)
	for i := 0; i < peekLines && sc.Scan(); i++ {
		line := bytes.TrimSpace(bytes.TrimPrefix(sc.Bytes(), []byte("\xef\xbb\xbf")))
		var fl firstLine
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &fl) != nil {
			continue
		}
		return fl, fl.V == result.Version
	}
	return firstLine{}, false
}

// groupSets makes one set per results file, merging the shard files of one sharded run, a
// matrix's or a study's (shardKey); a set never holds two files of one shard (a second run of
// the same study beside the first starts a set of its own).
func (s *Server) groupSets(files []string) []*Set {
	var sets []*Set
	shards := map[string][]*Set{}      // shardKey: the sets of that key, in order
	held := map[*Set]map[string]bool{} // the shards ("I/N") each sharded set holds
	for _, f := range files {
		fl, ok := peek(f)
		if !ok {
			continue
		}
		k := shardKey(f, fl)
		if k == "" {
			sets = append(sets, s.newSet(f, fl))
			continue
		}
		i := slices.IndexFunc(shards[k], func(set *Set) bool { return !held[set][fl.Shard] })
		if i >= 0 {
			set := shards[k][i]
			set.Files = append(set.Files, f)
			set.Shards++
			held[set][fl.Shard] = true
			continue
		}
		set := s.newSet(f, fl)
		set.Shards = 1
		held[set] = map[string]bool{fl.Shard: true}
		shards[k] = append(shards[k], set)
		sets = append(sets, set)
	}
	for _, set := range sets {
		for _, f := range set.Files {
			if fi, err := os.Stat(f); err == nil && fi.Size() > s.opts.MaxFileBytes {
				set.TooLarge = fmt.Sprintf("%s is %d bytes, over the view's limit of %d bytes: use pltlab report", filepath.Base(f), fi.Size(), s.opts.MaxFileBytes)
			}
		}
	}
	return sets
}

func (s *Server) newSet(f string, fl firstLine) *Set {
	sum := sha256.Sum256([]byte(f))
	name := f
	for _, r := range s.roots {
		if rel, err := filepath.Rel(filepath.Dir(r), f); err == nil && !strings.HasPrefix(rel, "..") && len(rel) < len(name) {
			name = rel
		}
	}
	return &Set{ID: hex.EncodeToString(sum[:6]), Name: name, Files: []string{f}, ConfigHash: fl.ConfigHash}
}

// loaded is a set read and analysed, valid while its files keep their sizes and times.
type loaded struct {
	set    *Set
	stamp  string
	recs   []*result.Record
	stats  analysis.ReadStats
	opened *analysis.Opened // the files as analysis.Open merged them
	report *analysis.Report
	study  *Study
	files  []string // every file under the roots at the last scan (artifact lookup)
	err    error
}

// stamp is the sizes and modification times of files.
func stamp(files []string) string {
	var b strings.Builder
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// Sets scans the roots and returns the result sets found, in path order.
func (s *Server) Sets() []*Set {
	sets, _ := s.scan()
	s.mu.Lock()
	s.sets = sets
	s.mu.Unlock()
	return sets
}

// set returns the set with the given ID (scanning again when it is not known yet) and its data,
// read again when its files changed.
func (s *Server) set(id string) (*loaded, bool) {
	s.mu.Lock()
	known := s.sets
	s.mu.Unlock()
	find := func(sets []*Set) *Set {
		for _, st := range sets {
			if st.ID == id {
				return st
			}
		}
		return nil
	}
	st := find(known)
	var files []string
	if st == nil {
		var sets []*Set
		sets, files = s.scan()
		s.mu.Lock()
		s.sets = sets
		s.mu.Unlock()
		if st = find(sets); st == nil {
			return nil, false
		}
	}
	return s.load(st, files), true
}

// load reads and analyses st unless its cached copy is current.
func (s *Server) load(st *Set, files []string) *loaded {
	stp := stamp(st.Files)
	key := st.ID + "\x00" + stp
	s.mu.Lock()
	old := s.cache[st.ID]
	if old != nil && old.stamp == stp {
		s.mu.Unlock()
		return old
	}
	if f := s.flights[key]; f != nil {
		s.mu.Unlock()
		<-f.done // another request parses this very change: one parse serves all
		return f.l
	}
	f := &flight{done: make(chan struct{})}
	s.flights[key] = f
	s.mu.Unlock()
	s.parses <- struct{}{}
	l := s.parse(st, files, old, stp)
	<-s.parses
	s.mu.Lock()
	s.cache[st.ID] = l
	delete(s.flights, key)
	s.mu.Unlock()
	f.l = l
	close(f.done)
	return l
}

// parse reads and analyses set st as of stamp stp (load does it once per change).
func (s *Server) parse(st *Set, files []string, old *loaded, stp string) *loaded {
	s.parsed.Add(1)
	l := &loaded{set: st, stamp: stp, files: files}
	if files == nil && old != nil {
		l.files = old.files
	}
	if l.files == nil {
		_, l.files = s.scan()
	}
	if st.TooLarge != "" {
		l.err = fmt.Errorf("%s", st.TooLarge)
	} else if err := s.sizeCheck(st); err != nil {
		l.err = err
	} else {
		// The one entry point of every reader (analysis.Open): the same merge, and the same
		// node-overlap warnings, as 'pltlab report' of these files.
		var o *analysis.Opened
		if o, l.err = analysis.Open(st.Files, nil, nil, plan.MergeOptions{}); l.err == nil {
			l.recs, l.stats, l.opened = o.Records, o.Stats, o
		}
	}
	if l.err == nil {
		l.report = l.opened.Analyze(analysis.Options{})
		if s.opts.Study != nil {
			l.study, l.err = s.opts.Study(l.recs)
		}
	}
	return l
}

// sizeCheck refuses a file that grew over the limit since the scan.
func (s *Server) sizeCheck(st *Set) error {
	for _, f := range st.Files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > s.opts.MaxFileBytes {
			return fmt.Errorf("%s is %d bytes, over the view's limit of %d bytes: use pltlab report", filepath.Base(f), fi.Size(), s.opts.MaxFileBytes)
		}
	}
	return nil
}

// LiveWithin is how recently a set's last file must have changed for the set to count as being
// written (its live panel opens by itself), unless every scheduled load is in it.
const LiveWithin = 30 * time.Second

// summary is what the index shows of a set.
type summary struct {
	Set                           *Set
	Kind, Date, Err, Live         string
	Pages, Links, Protos, Modes   []string
	Settings                      []string
	Loads, Valid, Scheduled, Made int
	// Partial says what a merged set lacks (result.MergeNotes).
	Partial []string
}

// summarise describes l for the index.
func summarise(l *loaded) summary {
	sm := summary{Set: l.set, Kind: "run"}
	if l.set.Shards > 0 {
		sm.Kind = fmt.Sprintf("sharded run (%d shard files merged)", l.set.Shards)
	}
	if l.study != nil {
		sm.Kind = "study"
	}
	if l.err != nil {
		sm.Err = l.err.Error()
		return sm
	}
	var first time.Time
	sched := map[string]int{}
	for _, r := range l.recs {
		if !r.Time.IsZero() && (first.IsZero() || r.Time.Before(first)) {
			first = r.Time
		}
		if r.IsLoad() || r.Kind == result.KindHarnessError {
			sm.Made++
		}
		if r.IsLoad() && !r.Warmup {
			sm.Loads++
			if result.Classify(r) == result.OutcomeValid {
				sm.Valid++
			}
		}
		if r.Scheduled > 0 {
			sched[r.Experiment+"\x00"+r.Shard] = r.Scheduled
		}
	}
	for _, n := range sched {
		sm.Scheduled += n
	}
	if !first.IsZero() {
		sm.Date = first.UTC().Format("2006-01-02 15:04 UTC")
	}
	for _, g := range l.report.Groups {
		sm.Pages = appendNew(sm.Pages, g.Page)
		sm.Links = appendNew(sm.Links, g.Link)
		sm.Protos = appendNew(sm.Protos, g.Protocol)
		sm.Modes = appendNew(sm.Modes, string(g.Mode))
		sm.Settings = appendNew(sm.Settings, g.Settings)
	}
	sm.Partial = result.MergeNotes(l.recs)
	complete := sm.Scheduled > 0 && sm.Made >= sm.Scheduled && len(sm.Partial) == 0
	if fi, err := os.Stat(l.set.Files[len(l.set.Files)-1]); err == nil && time.Since(fi.ModTime()) < LiveWithin && !complete {
		sm.Live = "being written"
	}
	return sm
}

func appendNew(xs []string, x string) []string {
	if x == "" || slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// groupID names a group in URLs: 10 hex digits of the SHA-256 of its key.
func groupID(g *analysis.Group) string {
	k := g.Key
	sum := sha256.Sum256([]byte(strings.Join([]string{k.Page, k.Link, string(k.Mode), k.Protocol, k.Settings}, "\x00")))
	return hex.EncodeToString(sum[:5])
}

// group returns the group of l with the given ID.
func (l *loaded) group(id string) *analysis.Group {
	for _, g := range l.report.Groups {
		if groupID(g) == id {
			return g
		}
	}
	return nil
}

// label is the group's label in l: its settings are shown only when the set's groups differ in
// them (one set's loads usually share one browser, pltlab version and TCP settings).
func (l *loaded) label(g *analysis.Group) string {
	for _, o := range l.report.Groups {
		if o.Settings != g.Settings {
			return groupLabel(g)
		}
	}
	k := *g
	k.Settings = ""
	return groupLabel(&k)
}

// groupLabel is "h2, page P, link L, cold [settings]".
func groupLabel(g *analysis.Group) string {
	s := fmt.Sprintf("%s, page %s, link %s, %s", g.Protocol, g.Page, g.Link, cmp.Or(string(g.Mode), "-"))
	if g.Settings != "" {
		s += " [" + g.Settings + "]"
	}
	return s
}

// loadIndex returns the index in l.recs of rec (its URL ID), -1 when absent.
func (l *loaded) loadIndex(rec *result.Record) int {
	return slices.Index(l.recs, rec)
}
