package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

func newReproduceCmd() *cobra.Command {
	var (
		runs   int
		out    string
		seed   int64
		chrome string
		force  bool
		art    artifactFlags
		resume bool
		shard  string
	)
	cmd := &cobra.Command{
		Use:   "reproduce carlucci2015 [--runs 20] [--out DIR]",
		Short: "Reproduce a published PLT experiment (carlucci2015) on today's stack",
		Long: `reproduce runs a published experiment with today's Chromium, HTTP/2 and HTTP/3 and prints
our figures beside the paper's.

carlucci2015: G. Carlucci, L. De Cicco, S. Mascolo, "HTTP over UDP: an experimental investigation
of QUIC", ACM SAC 2015. A page of JPEG images over a 3 Mbit/s bottleneck, 50 ms base RTT, droptail
buffer of one BDP, no loss; HTTP/1.1, HTTP/2 (SPDY in 2015) and HTTP/3 (QUIC) cold, plus HTTP/3
warm (0-RTT, as the 2015 QUIC had). TCP listeners use TLS 1.2 and CUBIC as in 2015.
Writes DIR/results.jsonl, DIR/report.md, DIR/report.html, DIR/report.json, DIR/report.csv,
DIR/plt.svg and DIR/plt.png (default DIR: results/carlucci2015). Needs root.
An interrupted reproduction is continued with --resume (same --runs and --seed): the loads in
DIR/results.jsonl are kept and the schedule goes on; the reports of an unfinished one say
PARTIAL.` + artifactsHelp,
		Example: `  sudo ./bin/pltlab reproduce carlucci2015
  sudo ./bin/pltlab reproduce carlucci2015 --runs 5 --out /tmp/carlucci-repro --force
  sudo ./bin/pltlab reproduce carlucci2015 --runs 5 --out /tmp/carlucci-repro --resume
  sudo ./bin/pltlab reproduce carlucci2015 --runs 5 --out /tmp/cr --artifacts /tmp/cr/artifacts --artifacts-for slowest`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] != experiment.Carlucci2015 {
				return usagef("reproduce needs one experiment name, got %q: accepted %s", strings.Join(args, " "), experiment.Carlucci2015)
			}
			if runs < 1 || runs > 10000 {
				return usagef("bad --runs %d: accepted 1..10000", runs)
			}
			if out == "" {
				out = filepath.Join("results", experiment.Carlucci2015)
			}
			if !resume && !force {
				if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
					return usagef("--out %s is not empty: choose another directory or add --force", out)
				}
			}
			if _, err := browser.FindChromium(chrome); err != nil {
				return usagef("%v", err)
			}
			if resume && force {
				return usagef("--resume continues the reproduction in --out; --force would replace it: give one")
			}
			ac, err := art.config()
			if err != nil {
				return err
			}
			if !resume {
				if err := prepareOutDir(out, force); err != nil {
					return err
				}
			}
			c := experiment.CarlucciConfig(runs)
			c.Seed, c.Chrome, c.Version, c.Artifacts, c.Visual = seed, chrome, pltlabVersion(), ac, art.visual
			if !resume {
				c.Name = fmt.Sprintf("%s-%s", experiment.Carlucci2015, time.Now().UTC().Format("20060102T150405Z"))
			} else {
				c.Name = ""
			}
			if c.Shard, err = parseShard(c, shard); err != nil {
				return err
			}
			if c.Shard.Count > 0 {
				// Every shard names the experiment alike; the reports come after the merge.
				mode := outReplace
				if resume {
					mode = outAppend
				} else {
					c.Name = experiment.Carlucci2015
				}
				return runExperiment(cmd, c, filepath.Join(out, "results.jsonl"), mode, cmd.ErrOrStderr())
			}
			return reproduce(cmd, c, out, resume)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&runs, "runs", 20, "measured loads per protocol")
	fl.StringVar(&out, "out", "", "output directory (default results/carlucci2015)")
	fl.Int64Var(&seed, "seed", experiment.DefaultSeed, "seed of the interleaved run order")
	fl.StringVar(&chrome, "chrome", "", "Chromium binary (default: $PLTLAB_CHROME, then chromium on PATH)")
	fl.BoolVar(&force, "force", false, "overwrite the files of an earlier reproduction in --out")
	fl.BoolVar(&resume, "resume", false, "continue the interrupted reproduction in --out (same --runs and --seed)")
	art.add(fl, "all")
	fl.StringVar(&shard, "shard", "", "run part I of N (I/N, auto or auto/N, as in 'pltlab run'); writes DIR/results.jsonl only: merge the shards, then report")
	return cmd
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

// reproduce runs c into DIR/results.jsonl, then writes the reports and prints the side-by-side
// table.
func reproduce(cmd *cobra.Command, c experiment.Config, dir string, resume bool) error {
	jsonl := filepath.Join(dir, "results.jsonl")
	mode := outReplace
	if resume {
		mode = outAppend
	}
	err := runExperiment(cmd, c, jsonl, mode, cmd.ErrOrStderr())
	if isUsage(err) {
		return err
	}
	var ee *exitError
	if err != nil && !errors.As(err, &ee) {
		return err
	}
	recs, _, rerr := analysis.ReadFiles([]string{jsonl}, nil, slog.Default())
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if c.Name == "" && len(recs) > 0 { // resumed: the experiment's name is the file's
		c.Name = recs[0].Experiment
	}
	if werr := writeReproduction(cmd.OutOrStdout(), dir, c, recs); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// writeReproduction writes the reports of a reproduction into dir, each opening with the
// side-by-side table of the paper's figures and ours, and prints that table to w.
func writeReproduction(w io.Writer, dir string, c experiment.Config, recs []*result.Record) error {
	w0 := w
	rep := analysis.Analyze(recs, analysis.Options{})
	if rep.Empty() {
		return analysis.ErrNoRecords
	}
	rep.Reproduction = &analysis.Reproduction{Title: "Carlucci et al., SAC 2015, reproduced with pltlab",
		References: carlucciReferences(c, recs), Notes: experiment.CarlucciDifferences(recs)}
	if err := rep.WriteDir(dir); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(w0, "WARNING: %s\n", w)
	}
	fmt.Fprintf(w, "Carlucci et al., SAC 2015, reproduced: page %s, link %s; TCP listeners TLS %s + %s, QUIC TLS 1.3 (quic-go)\n\n",
		c.Pages[0], c.Links[0], c.TLS, c.TCPCC)
	if err := rep.WriteReferenceTable(w, rep.Reproduction.References, false); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nReports: %s\n", strings.Join(prefixAll(dir, append([]string{"results.jsonl"}, analysis.DirFiles...)), " "))
	return nil
}

// carlucciReferences pairs the paper's figures with the ideal lower bound of the page actually
// loaded over the link actually used.
func carlucciReferences(c experiment.Config, recs []*result.Record) []analysis.Reference {
	var page result.Page
	var link result.Link
	for _, r := range recs {
		if r.IsLoad() {
			page, link = r.Page, r.Link
			break
		}
	}
	rtt := time.Duration(link.RTTMs * float64(time.Millisecond))
	var refs []analysis.Reference
	for _, row := range experiment.CarlucciPaper {
		bound := experiment.IdealPLT(page.TotalBytes, link.DownBps, rtt, experiment.MinRoundTrips(row.Arm, c.TLS))
		refs = append(refs, analysis.Reference{Protocol: row.Arm.Protocol, Mode: row.Arm.Mode, Label: row.Label,
			PaperMs: float64(row.PLT.Milliseconds()), BoundMs: float64(bound.Microseconds()) / 1000})
	}
	return refs
}

func prefixAll(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}
