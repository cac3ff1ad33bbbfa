package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/studies"
)

// reproduceFlags are the flags of 'pltlab reproduce'.
type reproduceFlags struct {
	runs      int
	out       string
	seed      int64
	chrome    string
	scale     string
	force     bool
	noCheck   bool
	resume    bool
	decide    bool
	art       artifactFlags
	list      bool
	dryRun    bool
	nodes     int
	calibrate bool
	shard     string
	merge     bool
	prefer    string
	view      string
	derive    func(experiment.Config) (*experiment.Schedule, error) // measureSetup.derive
}

// newReproduceCmd builds 'pltlab reproduce', making setup once the flags are checked.
func newReproduceCmd(setup *measureSetup) *cobra.Command {
	var f reproduceFlags
	cmd := &cobra.Command{
		Use:   "reproduce STUDY [--scale smoke|quick|full] [--runs N] [--shard I/N] [--out DIR] | STUDY --merge FILE... | --list [--nodes N]",
		Short: "Reproduce a published study (" + strings.Join(studies.Names(), ", ") + ") on today's stack",
		Long: `reproduce runs a published study with today's Chromium, HTTP/2 and HTTP/3 and reports our
figures beside the published ones. Every report opens with a findings table: each published
finding with its verdict: reproduced, contradicted (the data exclude it: the evidence names the
interval), inconclusive (the evidence gives the smallest effect the sample could detect with 80 %
power and the loads per arm that would decide it), not testable here, or not run at this scale;
with the evidence (numbers, p-values, the cells used, which section or plot).

--list shows the studies with the size and estimated time of each scale on one 2-core machine.
--scale smoke is a functional check (minutes), quick a representative sub-grid (<= 30 min),
full the published grid (its estimated time is printed before it starts).

carlucci2015: G. Carlucci, L. De Cicco, S. Mascolo, "HTTP over UDP: an experimental investigation
of QUIC", ACM SAC 2015: the loss-free table (3 Mbit/s, 50 ms RTT, buffer = BDP, image page;
HTTP/1.1, HTTP/2 (SPDY) and HTTP/3 (QUIC) cold plus HTTP/3 warm, TLS 1.2 + CUBIC on TCP), a lossy
series and the safe-deployment flows. --calibrate sweeps candidate page compositions instead and
ranks them against the paper's three PLTs.
kakhki2017: Kakhki et al., "Taking a Long Look at QUIC", IMC 2017 (Table 2 grid, heatmaps).
muthuraj2024: the 2024 Emulab replication (TCP CUBIC and BBR vs QUIC).

Writes DIR/results.jsonl, DIR/report.md, DIR/report.html, DIR/findings.json, figures, and each
part's full analysis in DIR/PART/ (default DIR: results/STUDY). Needs root (or runs itself in
user namespaces). An interrupted reproduction is continued with --resume (same --scale, --runs
and --seed): the loads in DIR/results.jsonl are kept and every part's schedule goes on;
the reports of an unfinished one say PARTIAL. --resume on a complete DIR/results.jsonl (also
one written by an older pltlab) measures nothing and checks no link: it says so and rewrites
the findings, reports and figures from the records, whose own settings decide the plan.
--decide adds to a complete reproduction the loads per arm (and, for findings on bulk flows,
the flow runs per mix) that would decide its inconclusive findings (printed with each finding,
with their time) and re-judges.

--shard I/N (or auto, auto/N in a Slurm array or a Kubernetes Indexed Job) runs one shard of the
study: its parts' measured blocks and flow parts, cut into N runs of whole blocks balanced by the
cost model; every shard brings up and self-checks its own links and makes their warm-ups first.
A shard writes DIR/results.jsonl only (no report); --merge joins the shards' files, names any
missing shard or load, and writes the report of the whole study into --out, as an unsharded run
would ('pltlab slurm --study' and 'pltlab k8s --study' write the jobs that do both). --list
--nodes N adds each study's time on N nodes, one shard each.` + artifactsHelp,
		Example: `  ./bin/pltlab reproduce --list
  sudo ./bin/pltlab reproduce carlucci2015
  sudo ./bin/pltlab reproduce carlucci2015 --scale smoke --out /tmp/carlucci-smoke --force
  sudo ./bin/pltlab reproduce carlucci2015 --calibrate --out /tmp/carlucci-calibrate
  sudo ./bin/pltlab reproduce kakhki2017 --scale quick --out /tmp/kakhki-quick
  sudo ./bin/pltlab reproduce kakhki2017 --scale quick --out /tmp/kakhki-quick --resume
  ./bin/pltlab reproduce carlucci2015 --resume --out results/carlucci2015
  sudo ./bin/pltlab reproduce carlucci2015 --decide --out results/carlucci2015
  sudo ./bin/pltlab reproduce carlucci2015 --scale smoke --out /tmp/cr --artifacts /tmp/cr/artifacts --artifacts-for slowest
  ./bin/pltlab reproduce --list --nodes 16
  sudo ./bin/pltlab reproduce kakhki2017 --scale smoke --shard 1/3 --out /tmp/kk/shard-1
  ./bin/pltlab reproduce kakhki2017 --scale smoke --merge /tmp/kk/shard-*/results.jsonl --out /tmp/kk/merged`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd, args, setup) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.list, "list", false, "list the studies with their sizes and estimated times")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan the flags give (loads, flow runs, links, shard, estimate per part) and exit without measuring")
	fl.StringVar(&f.scale, "scale", "", "smoke, quick or full (default: the study's, quick)")
	fl.IntVar(&f.runs, "runs", 0, "measured loads per cell, replacing the scale's (0 = the scale's)")
	fl.StringVar(&f.out, "out", "", "output directory (default results/STUDY)")
	fl.Int64Var(&f.seed, "seed", experiment.DefaultSeed, "seed of the interleaved run order and of random loss")
	fl.StringVar(&f.chrome, "chrome", "", "Chromium binary (default: $PLTLAB_CHROME, then chromium on PATH)")
	fl.BoolVar(&f.force, "force", false, "overwrite the files of an earlier reproduction in --out")
	fl.BoolVar(&f.noCheck, "no-link-check", false, "skip the links' self-check before measuring (for a machine too busy to pass it: the link is then unchecked)")
	fl.BoolVar(&f.resume, "resume", false, "continue the interrupted reproduction in --out (same --scale, --runs and --seed); on a complete one, re-judge it from its records")
	fl.BoolVar(&f.decide, "decide", false, "add to the complete reproduction in --out the loads that would decide its inconclusive findings, then re-judge")
	f.art.add(fl, "all")
	fl.StringVar(&f.shard, "shard", "", "run one shard of the study: I/N (0 <= I < N), or auto / auto/N inside a Slurm array or Kubernetes Indexed Job")
	fl.BoolVar(&f.merge, "merge", false, "join the results.jsonl files of the study's shards (the arguments after STUDY) and write its report into --out")
	fl.StringVar(&f.prefer, "prefer", "", "with --merge, of two different lines for one load keep the newest (newest) or FILE's (FILE, one of the files given); default: refuse")
	fl.IntVar(&f.nodes, "nodes", 0, "with --list: also show each study's time on N nodes, one shard each")
	addViewFlag(fl, &f.view)
	fl.BoolVar(&f.calibrate, "calibrate", false, "carlucci2015 only: sweep candidate page compositions and rank them against the paper")
	return cmd
}

// run does what the flags ask of reproduce: list, merge, or derive the plan once
// (reproduceFlags.prepare) and print it (--dry-run) or run it (run, --resume, --decide), making
// setup once the flags are checked.
func (f *reproduceFlags) run(cmd *cobra.Command, args []string, setup *measureSetup) error {
	f.derive = setup.derive
	m, files, err := f.mode(args)
	if err != nil {
		return err
	}
	if m == modeList {
		return listStudies(cmd.OutOrStdout(), f.nodes, studies.RunOptions{Runs: f.runs, Seed: f.seed})
	}
	if m == modeMerge {
		args = args[:1]
	}
	st, sp, err := f.plan(args)
	if err != nil {
		return err
	}
	dir := f.outDir(st)
	if m == modeMerge {
		if err := checkViewFlag(f.view, dir); err != nil {
			return err
		}
		return mergeStudy(cmd, st, sp, *f, dir, files)
	}
	prep, err := f.prepare(sp)
	if err != nil {
		return err
	}
	if err := checkViewFlag(f.view, dir); err != nil {
		return err // --dry-run too: it shows what the flags would do
	}
	if m == modeDryRun {
		return dryRunStudy(cmd.OutOrStdout(), prep, *f, dir)
	}
	job, err := f.jobOf(st, prep, m, dir)
	if err != nil {
		return err
	}
	if err := setup.begin(cmd); err != nil {
		return err
	}
	stopView, err := startViewBeside(cmd.Context(), f.view, dir, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer stopView()
	return reproduce(cmd, job, *f)
}

// plan resolves the study and its plan from the arguments and flags, as usage errors.
func (f *reproduceFlags) plan(args []string) (*studies.Study, studies.Plan, error) {
	if len(args) != 1 {
		return nil, studies.Plan{}, usagef("reproduce needs one study name, got %q: accepted %s (or --list)", strings.Join(args, " "), strings.Join(studies.Names(), ", "))
	}
	st, err := studies.Lookup(args[0])
	if err != nil {
		return nil, studies.Plan{}, asUsage(err)
	}
	if f.calibrate {
		if st.Name != studies.Carlucci2015 {
			return nil, studies.Plan{}, usagef("--calibrate is for %s only, got %s", studies.Carlucci2015, st.Name)
		}
		st = studies.CarlucciCalibration()
	}
	scale := st.DefaultScale
	if f.scale != "" {
		if scale, err = studies.ParseScale(f.scale); err != nil {
			return nil, studies.Plan{}, usagef("bad --scale: %v", err)
		}
	}
	if f.runs < 0 || f.runs > 10000 {
		return nil, studies.Plan{}, usagef("bad --runs %d: accepted 1..10000, or 0 for the scale's", f.runs)
	}
	sp := st.PlanOn(scale, studies.ProbeHost()).Apply(studies.RunOptions{Runs: f.runs, Seed: f.seed}) // the one plan the flags give, for this machine
	if err := sp.Validate(); err != nil {
		return nil, studies.Plan{}, asUsage(err)
	}
	return st, sp, nil
}

// reproduceMode is what one 'pltlab reproduce' does, decided once from the flags.
type reproduceMode int

const (
	modeRun    reproduceMode = iota // measure the plan into a fresh --out
	modeResume                      // continue the run in --out, or re-judge it when complete
	modeDecide                      // add the loads that decide the inconclusive findings
	modeMerge                       // join the shards' files and write the report
	modeDryRun                      // print the plan
	modeList                        // list the studies
)

// mode decides what the flags ask for, refusing combinations that mean nothing (usage errors),
// and returns the shards' files of --merge (the arguments after the study).
func (f *reproduceFlags) mode(args []string) (reproduceMode, []string, error) {
	switch {
	case f.list:
		if len(args) > 0 {
			return 0, nil, usagef("--list takes no study, got %q", strings.Join(args, " "))
		}
		if f.nodes < 0 || f.nodes > plan.MaxShards {
			return 0, nil, usagef("bad --nodes %d: accepted 1..%d", f.nodes, plan.MaxShards)
		}
		if f.runs < 0 || f.runs > 10000 {
			return 0, nil, usagef("bad --runs %d: accepted 1..10000, or 0 for the scale's", f.runs)
		}
		return modeList, nil, nil
	case f.nodes != 0:
		return 0, nil, usagef("--nodes is for --list")
	case f.merge:
		if len(args) < 2 {
			return 0, nil, usagef("--merge needs the study and the shards' files: STUDY --merge FILE.jsonl...")
		}
		if f.shard != "" || f.resume {
			return 0, nil, usagef("--merge joins finished shards: give no --shard or --resume")
		}
		if f.dryRun || f.decide {
			return 0, nil, usagef("--merge joins finished shards: give no --dry-run or --decide")
		}
		return modeMerge, args[1:], nil
	case f.prefer != "":
		return 0, nil, usagef("--prefer is for --merge")
	case f.dryRun && f.decide:
		return 0, nil, usagef("--dry-run shows the plan of a run: give it without --merge or --decide")
	case f.dryRun:
		return modeDryRun, nil, nil
	case f.resume && f.force:
		return 0, nil, usagef("--resume continues the reproduction in --out; --force would replace it: give one")
	case f.decide && (f.force || f.resume):
		return 0, nil, usagef("--decide adds loads to the complete reproduction in --out: it takes neither --force nor --resume")
	case f.decide:
		return modeDecide, nil, nil
	case f.resume:
		return modeResume, nil, nil
	}
	return modeRun, nil, nil
}

// outDir is --out, or results/STUDY (results/STUDY-calibrate with --calibrate).
func (f *reproduceFlags) outDir(st *studies.Study) string {
	if f.out != "" {
		return f.out
	}
	if f.calibrate {
		return filepath.Join("results", st.Name+"-calibrate")
	}
	return filepath.Join("results", st.Name)
}

// jobOf is the reproduction mode m asks of plan in dir (studies.Job), with the per-load
// evidence options of the flags. Bad input is refused before anything is written (usage
// errors).
func (f *reproduceFlags) jobOf(st *studies.Study, prep *studies.Prepared, m reproduceMode, dir string) (studies.Job, error) {
	sp := prep.Plan
	ac, err := f.art.config()
	if err != nil {
		return studies.Job{}, err
	}
	if err := sp.CheckTCPCC(); err != nil {
		return studies.Job{}, asUsage(err) // tried where the server will run, before anything is written
	}
	if err := sp.CheckDevices(); err != nil {
		return studies.Job{}, asUsage(err) // a part's CPU budget the kernel refuses here (rootless)
	}
	mode := map[reproduceMode]studies.JobMode{modeRun: studies.JobRun, modeResume: studies.JobResume, modeDecide: studies.JobDecide}[m]
	if m == modeRun {
		if err := prepareOutDir(dir, f.force); err != nil {
			return studies.Job{}, err
		}
	}
	o := f.options()
	o.Chrome, o.Version, o.SkipLinkCheck = f.chrome, pltlabVersion(), f.noCheck
	o.Configure = func(c *experiment.Config) { c.Artifacts, c.Visual = ac, f.art.visual }
	o.Process = processSettings{} // the process-wide settings a study's arms switch, made here
	return studies.Job{Study: st, Plan: sp, Mode: mode, Dir: dir, Options: o, Prepared: prep}, nil
}

// listStudies prints every study with the loads and estimated time of each scale (the cost
// model's, plan.LoadOverhead), and with nodes > 0 its time on that many nodes (one shard
// each, Plan.EstimateOn), each plan prepared once with o (--runs, --seed).
func listStudies(w io.Writer, nodes int, o studies.RunOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	onNodes := ""
	if nodes > 0 {
		onNodes = fmt.Sprintf("\tON %d NODES", nodes)
	}
	fmt.Fprintf(tw, "STUDY\tSCALE\tPAGE LOADS\tFLOW RUNS\tESTIMATED TIME%s\tTITLE\n", onNodes)
	list, host := append(studies.All(), studies.CarlucciCalibration()), studies.ProbeHost()
	for _, st := range list {
		name := strings.TrimSpace(st.Name + " " + st.Option)
		for _, sc := range studies.Scales {
			pr, err := st.PlanOn(sc, host).Prepare(o) // each scale's plan derived once
			if err != nil {
				return err
			}
			p := pr.Plan
			def := ""
			if sc == st.DefaultScale {
				def = " (default)"
			}
			est := pr.Estimate()
			col := ""
			if nodes > 0 && p.Shardable() != nil {
				col = "\tnot shardable (runs whole)"
			} else if nodes > 0 {
				on, err := pr.EstimateOn(nodes)
				if err != nil {
					return err
				}
				col = "\t" + quantity.FormatEstimate(on)
				if most := pr.MaxShards(); most < nodes {
					col += fmt.Sprintf(" (%d shards at most)", most)
				}
			}
			fmt.Fprintf(tw, "%s\t%s%s\t%d\t%d\t%s%s\t%s\n", name, sc, def, p.Loads(), p.FlowRuns(), quantity.FormatEstimate(est), col, st.Title)
		}
	}
	return tw.Flush()
}

// prepare derives the plan of the run the flags give, once (studies.Plan.Prepare: every part's
// schedule, cost-model times and the shard's share), for the dry run and the run to read, as
// usage errors: a count larger than the work is refused with the largest useful count.
func (f *reproduceFlags) prepare(p studies.Plan) (*studies.Prepared, error) {
	if f.shard != "" {
		if err := p.Shardable(); err != nil {
			return nil, usagef("bad --shard %s: %v", f.shard, err)
		}
		if _, err := plan.ParseShard(f.shard, os.Getenv); err != nil {
			return nil, usagef("bad --shard: %v", err)
		}
	}
	prep, err := p.Prepare(f.options())
	if err != nil && f.shard != "" {
		return nil, usagef("bad --shard %s: %v", f.shard, err)
	}
	return prep, asUsage(err)
}

// options are the run options the flags give that decide the plan (and so the shards).
func (f *reproduceFlags) options() studies.RunOptions {
	o := studies.RunOptions{Runs: f.runs, Seed: f.seed, Schedule: f.derive}
	if f.shard != "" {
		o.Shard, _ = plan.ParseShard(f.shard, os.Getenv) // checked by prepare
	}
	return o
}

// mergeStudy joins the shards' files of a study (studies.MergeShards) into DIR/results.jsonl,
// writes the study report as an unsharded run would, and exits 1 naming any missing shard or
// load (the report of what is there is written all the same).
func mergeStudy(cmd *cobra.Command, st *studies.Study, sp studies.Plan, f reproduceFlags, dir string, files []string) error {
	if err := sp.Shardable(); err != nil {
		return usagef("--merge: %v", err)
	}
	var srcs []plan.Source
	for _, name := range files {
		if err := checkInputFile(name); err != nil {
			return err
		}
		recs, _, err := analysis.ReadAll([]string{name}, nil, slog.Default())
		if err != nil {
			return err
		}
		srcs = append(srcs, plan.Source{Name: name, Records: recs})
	}
	recs, check, err := studies.MergeShards(sp, f.options(), srcs, plan.MergeOptions{Prefer: f.prefer})
	if err != nil {
		return asUsage(err)
	}
	if err := prepareOutDir(dir, f.force); err != nil {
		return err
	}
	jsonl := filepath.Join(dir, "results.jsonl")
	if err := writeRecords(cmd.OutOrStdout(), jsonl, true, recs); err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	for _, m := range check.Missing {
		fmt.Fprintf(stderr, "pltlab: shard %s left no line (rerun it)\n", m)
	}
	for _, line := range check.Short {
		fmt.Fprintf(stderr, "pltlab: %s\n", line)
	}
	fmt.Fprintf(stderr, "pltlab: merged %d of %d shards of %s scale %s into %s: %s\n", check.Count-len(check.Missing), check.Count, st.Name, sp.Scale, jsonl, studies.EstimatedTook(check.Estimate, recs))
	if check.Duplicates > 0 {
		fmt.Fprintf(stderr, "pltlab: %d lines were read twice and kept once (the same shard's file given twice, or a shard rerun over its first file)\n", check.Duplicates)
	}
	ev, js, werr := studies.Judge(dir, st, sp, recs, check.Estimate)
	if werr == nil {
		werr = printStudy(cmd.OutOrStdout(), dir, st, ev, js)
	}
	if werr != nil {
		return werr
	}
	if !check.Complete() {
		return &exitError{code: 1, err: fmt.Errorf("%d shard(s) missing and %d short: the report covers what is there; rerun them (with --resume) and merge again", len(check.Missing), len(check.Short))}
	}
	return nil
}

// prepareOutDir creates dir, refusing one that holds files unless force.
func prepareOutDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usagef("bad --out %s: %v", dir, err)
		}
		return nil
	case err != nil:
		return usagef("bad --out %s: %v", dir, err)
	case len(entries) > 0 && !force:
		return usagef("--out %s is not empty: choose another directory or add --force", dir)
	}
	return nil
}

// reproduce does the job (studies.Reproduce: run, resume, re-judge, decide) with the records
// file, progress and messages of this terminal, then prints the closing line, the study's
// headline table and the findings. An interrupt keeps every written record and exits with code
// 130; a part that failed (a link refused by its self-check, say) does not stop the report of
// the others, and its error is returned after the report.
func reproduce(cmd *cobra.Command, job studies.Job, f reproduceFlags) error {
	stderr := cmd.ErrOrStderr()
	tmp, cleanup, err := makeTempRoot()
	if err != nil {
		return err
	}
	defer cleanup()
	job.Options.TempDir = tmp
	jsonl := filepath.Join(job.Dir, studies.ResultsFile)
	sink := studies.Sink{
		Open: func(appendTo bool) (io.Writer, func() error, error) {
			mode := outReplace
			if appendTo {
				mode = outAppend
			}
			of, err := openOut("--out", jsonl, mode)
			if err != nil {
				return nil, nil, err
			}
			return of, of.Close, nil
		},
		Say: func(line string) { fmt.Fprintf(stderr, "pltlab: %s\n", line) },
		Progress: func(left int) (func(experiment.Progress), func()) {
			return newProgress(left, stderr, isTerminal(stderr))
		},
		Check: func(p studies.Plan) error {
			if p.Loads() > 0 { // a study of bulk runs only needs no browser
				if _, err := browser.FindChromium(f.chrome); err != nil {
					return usagef("%v", err)
				}
			}
			return nil
		},
	}
	out, err := studies.Reproduce(cmd.Context(), job, sink)
	var ref *studies.RefusedError
	if errors.As(err, &ref) {
		return asUsage(err)
	}
	if out.Step != studies.StepMeasure {
		if err != nil {
			return err
		}
		if out.Step == studies.StepRejudge {
			return printStudy(cmd.OutOrStdout(), job.Dir, job.Study, out.Support, out.Judgements)
		}
		return nil // nothing to decide, said
	}
	if out.Summary.Elapsed > 0 || out.RunErr != nil {
		fmt.Fprintf(stderr, "pltlab: %s; estimated %s, took %s\n", summaryLine(out.Summary), quantity.FormatEstimate(out.Estimate), quantity.FormatEstimate(out.Summary.Elapsed))
	}
	runErr := artifactsExit(explainSetupError(stopError(cmd.Context(), out.RunErr, "the records written so far are kept (continue with --resume)")), out.Summary.ArtifactsFailed)
	if isUsage(err) || out.Support == nil && err != nil {
		return errors.Join(runErr, err) // refused before measuring, or the records could not be read
	}
	if job.Options.Shard.Count > 0 {
		fmt.Fprintf(stderr, "pltlab: shard %s written to %s; when every shard is done: pltlab reproduce %s --scale %s --merge SHARD/results.jsonl... --out DIR\n",
			f.shard, jsonl, job.Study.Name, job.Plan.Scale)
		return runErr
	}
	if err != nil {
		return errors.Join(runErr, err)
	}
	return errors.Join(runErr, printStudy(cmd.OutOrStdout(), job.Dir, job.Study, out.Support, out.Judgements))
}

// printStudy prints a judged study (studies.Judge): its warnings, the study's headline table,
// the findings and the report files.
func printStudy(w io.Writer, dir string, st *studies.Study, ev *studies.Support, js []studies.Judgement) error {
	for _, warning := range ev.Warnings() {
		fmt.Fprintf(w, "WARNING: %s\n", warning)
	}
	if st.Console != nil {
		if err := st.Console(w, ev); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if err := studies.WriteFindings(w, ev, js); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nReports: %s\n", strings.Join(prefixAll(dir, append([]string{studies.ResultsFile}, studies.ReportFiles...)), " "))
	return nil
}

func prefixAll(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

// dryRunStudy prints the plan the flags give (studies.Prepared.Announce, then a line per part
// and flow part with its loads, links and estimate) without measuring: no root, no Chromium and
// no file are needed. With --resume, the loads already in --out are counted as made.
func dryRunStudy(w io.Writer, prep *studies.Prepared, f reproduceFlags, dir string) error {
	if f.resume {
		if recs, _, err := analysis.ReadFiles([]string{filepath.Join(dir, "results.jsonl")}, nil, nil); err == nil {
			if err := prep.Resume(recs); err != nil {
				return usagef("%v", err)
			}
		}
	}
	fmt.Fprintln(w, prep.Announce())
	for _, l := range prep.PartLines() {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return nil
}
