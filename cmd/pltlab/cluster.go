package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/cluster"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/studies"
)

// sweepFlags are the flags 'pltlab slurm' and 'pltlab k8s' share.
type sweepFlags struct {
	matrix      string
	study       string
	scale       string
	runs        int
	seed        int64
	shards, cpu int
	memMiB      int
	time        time.Duration
	exclusive   bool
	shield      string // the root's --shield-cpu, for the shards (measureSetup.shieldNodes)
	out         string
	force       bool
}

func (f *sweepFlags) register(cmd *cobra.Command, outHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&f.matrix, "matrix", "", "YAML matrix file of the sweep (as for 'pltlab run --matrix'); this or --study")
	fl.StringVar(&f.study, "study", "", "a study to reproduce instead of a matrix: "+strings.Join(studies.Names(), ", "))
	fl.StringVar(&f.scale, "scale", "", "with --study: smoke, quick or full (default: the study's)")
	fl.IntVar(&f.runs, "runs", 0, "with --study: measured loads per cell, replacing the scale's (0 = the scale's)")
	fl.Int64Var(&f.seed, "seed", experiment.DefaultSeed, "with --study: seed of the order and of random loss")
	fl.IntVar(&f.shards, "shards", 0, "number of shards (see 'pltlab reproduce --list --nodes N' or 'pltlab run --matrix FILE --shard 0/N --dry-run'); required")
	fl.IntVar(&f.cpu, "cpus", cluster.DefaultCPUs, "whole cores per shard (the rule: 2 per shard, so a node runs cores/2 shards at once)")
	fl.IntVar(&f.memMiB, "mem", 0, "memory per shard in MiB (default: twice the plan's modelled footprint: pltlab, the server's page objects and one Chromium per protocol)")
	fl.DurationVar(&f.time, "time", 0, "wall-time limit per shard (default: twice the longest shard's estimate + 10m; never below the estimate)")
	fl.BoolVar(&f.exclusive, "exclusive", false, "give every shard a whole node (Slurm --exclusive)")
	fl.StringVar(&f.out, "out", "", outHelp)
	fl.BoolVar(&f.force, "force", false, "overwrite earlier output")
}

// sweep reads the matrix (and the trace files it names) or looks up the study, and builds the
// cluster.Sweep, as usage errors.
func (f *sweepFlags) sweep() (cluster.Sweep, error) {
	if f.shards < 1 {
		return cluster.Sweep{}, usagef("bad --shards %d: accepted 1..%d", f.shards, plan.MaxShards)
	}
	if f.cpu < 1 || f.cpu > cluster.MaxCPUs {
		return cluster.Sweep{}, usagef("bad --cpus %d: accepted whole cores per shard 1..%d (default %d)", f.cpu, cluster.MaxCPUs, cluster.DefaultCPUs)
	}
	s := cluster.Sweep{Shards: f.shards, CPUs: f.cpu, MemoryMiB: f.memMiB, Time: f.time, Exclusive: f.exclusive}
	cores := make([]int, f.cpu)
	for i := range cores {
		cores[i] = i
	}
	if cpu, on, err := cpushield.ParseFlag(f.shield, cores); err != nil {
		return s, usagef("bad --shield-cpu %q for the shards: accepted off or a CPU of each shard's node among its --cpus %d cores, %v, with at least one other left", f.shield, f.cpu, cores)
	} else if on {
		s.ShieldCPU = &cpu
	}
	switch {
	case f.matrix != "" && f.study != "":
		return s, usagef("--matrix and --study both given: give one")
	case f.study != "":
		st, err := studies.Lookup(f.study)
		if err != nil {
			return s, usagef("bad --study: %v", err)
		}
		scale := st.DefaultScale
		if f.scale != "" {
			if scale, err = studies.ParseScale(f.scale); err != nil {
				return s, usagef("bad --scale: %v", err)
			}
		}
		if f.runs < 0 || f.runs > 10000 {
			return s, usagef("bad --runs %d: accepted 1..10000, or 0 for the scale's", f.runs)
		}
		sp := st.PlanOn(scale, studies.ProbeHost()).Apply(studies.RunOptions{Runs: f.runs, Seed: f.seed}) // the one plan the flags give, for this machine
		if err := sp.Validate(); err != nil {
			return s, asUsage(err)
		}
		s.Study = &cluster.Study{Name: st.Name, Scale: scale, Runs: f.runs, Seed: f.seed, Plan: sp}
		return s, nil
	case f.matrix == "":
		return s, usagef("missing --matrix or --study: give the sweep's YAML matrix file or a study (%s)", strings.Join(studies.Names(), ", "))
	case f.scale != "" || f.runs != 0:
		return s, usagef("--scale and --runs are for --study; a matrix sets its own runs")
	}
	c, err := experiment.OpenMatrix(f.matrix, nil)
	if err != nil {
		return s, usagef("bad --matrix: %v", err)
	}
	b, err := os.ReadFile(f.matrix) // a regular file of sane size: OpenMatrix checked it
	if err != nil {
		return s, usagef("bad --matrix: %v", err)
	}
	if err := experiment.CheckSpecs(c); err != nil {
		return s, asUsage(err)
	}
	// Trace files travel with the matrix: the jobs read the copy, whose relative trace paths
	// resolve from its own directory.
	s.Traces = map[string][]byte{}
	for _, tr := range experiment.MatrixTraces(c) {
		rel := tr.Written
		if filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(rel), "..") {
			return s, usagef("bad trace %q in %s: the jobs get a copy of the matrix and its traces: accepted a trace path relative to the matrix file, inside its directory", rel, f.matrix)
		}
		data, err := os.ReadFile(tr.Path)
		if err != nil {
			return s, usagef("bad trace %q in %s: %v", rel, f.matrix, err)
		}
		s.Traces[filepath.Clean(rel)] = data
	}
	s.Config, s.Matrix = c, b
	return s, nil
}

func newSlurmCmd(setup *measureSetup) *cobra.Command {
	var (
		f                         sweepFlags
		pltlab, partition, chrome string
	)
	cmd := &cobra.Command{
		Use:   "slurm (--study STUDY [--scale S] | --matrix FILE) --shards N [--cpus 2] [--time 2h] [--out DIR]",
		Short: "Write a Slurm job array that runs a study's or a sweep's shards, and a final job that merges and reports",
		Long: `slurm writes into DIR (on a file system every node sees): shards.sbatch, a job array with one
task per shard, on --cpus whole cores with --mem and --time (defaults from the cost model and one
shard's measured footprint, printed; --time is never below the longest shard's estimate), logs
in DIR/logs, requeued on node failure and then continued with --resume; merge.sbatch, a job that
runs after every task has ended, merges the shards (naming missing ones, exit 1) and writes the
report; submit.sh, which submits both.
With --study, task I runs 'pltlab reproduce STUDY --scale S --shard auto/N --out DIR/shard-I' and
the merge 'pltlab reproduce STUDY --merge DIR/shard-*/results.jsonl --out DIR/merged': the same
report, findings.json and figures as an unsharded run. With --matrix, task I runs 'pltlab run
--matrix DIR/matrix.yaml --shard auto/N' into DIR/shard-I.jsonl (the matrix and its trace files
are copied into DIR) and the merge 'pltlab merge' and 'pltlab report'.
Nothing is submitted: run 'sh DIR/submit.sh' on the cluster's login node. Shaped links need root
on the nodes or pltlab's rootless mode (unprivileged user namespaces).`,
		Example: `  ./bin/pltlab slurm --study kakhki2017 --scale full --shards 64 --out /shared/sweeps/kakhki-full
  ./bin/pltlab slurm --matrix grid.yaml --shards 8 --out /shared/sweeps/grid
  ./bin/pltlab slurm --matrix grid.yaml --shards 8 --cpus 4 --time 6h --partition measure --out /shared/sweeps/grid --force
  sh /shared/sweeps/grid/submit.sh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.shield = setup.shieldNodes
			s, err := f.sweep()
			if err != nil {
				return err
			}
			if f.out == "" {
				return usagef("missing --out: give the sweep's directory on a file system every node sees")
			}
			dir, err := filepath.Abs(f.out)
			if err != nil {
				return usagef("bad --out %s: %v", f.out, err)
			}
			if pltlab == "" {
				if pltlab, err = os.Executable(); err != nil {
					return fmt.Errorf("find the pltlab binary: %w (give --pltlab)", err)
				}
			}
			var runArgs []string
			if chrome != "" {
				runArgs = []string{"--chrome", chrome}
			}
			files, err := cluster.Slurm(s, cluster.SlurmOptions{Dir: dir, Pltlab: pltlab, Partition: partition, RunArgs: runArgs})
			if err != nil {
				return asUsage(err)
			}
			if err := prepareOutDir(dir, f.force); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(files)) {
				mode := os.FileMode(0o644)
				if filepath.Ext(name) == ".sh" || filepath.Ext(name) == ".sbatch" {
					mode = 0o755
				}
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					return fmt.Errorf("write slurm files: %w", err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), files[name], mode); err != nil {
					return fmt.Errorf("write slurm files: %w", err)
				}
			}
			est, _ := s.Estimate()
			limit, _ := s.TimeLimit()
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s, %s, %s\n%d shards of %d cores and %d MiB, estimated %s each at most (the whole: %s on one machine); time limit %s (--time)\nsubmit with: sh %s\n",
				dir, cluster.SlurmShardsScript, cluster.SlurmMergeScript, cluster.SlurmSubmitScript,
				s.Shards, s.CPUs, s.MemoryMiB, quantity.FormatEstimate(est.Longest()), quantity.FormatEstimate(est.Total), limit, filepath.Join(dir, cluster.SlurmSubmitScript))
			return nil
		},
	}
	f.register(cmd, "directory for the scripts, results and report (shared by the nodes); required")
	cmd.Flags().StringVar(&pltlab, "pltlab", "", "pltlab binary as the nodes see it (default: this binary)")
	cmd.Flags().StringVar(&partition, "partition", "", "Slurm partition (default: the cluster's default)")
	cmd.Flags().StringVar(&chrome, "chrome", "", "Chromium binary on the nodes (default: chromium on their PATH)")
	return cmd
}

func newK8sCmd(setup *measureSetup) *cobra.Command {
	var (
		f        sweepFlags
		o        cluster.K8sOptions
		shared   bool
		mergeOut string
	)
	cmd := &cobra.Command{
		Use:   "k8s (--study STUDY [--scale S] | --matrix FILE) --shards N --parallelism P --image IMAGE [--out FILE] [--merge-out FILE]",
		Short: "Write a Kubernetes Indexed Job that runs a study's or a sweep's shards, one pod per node, and its merge Job",
		Long: `k8s writes the YAML for 'kubectl apply -f': a ConfigMap with the matrix, a ReadWriteMany
PersistentVolumeClaim for the results (unless --results-claim names one) and an Indexed Job of
--shards completions, --parallelism pods at once, one pod per node (required anti-affinity;
--allow-shared-nodes lifts it), each with --cpus whole cores and --mem plus the memory-backed
/dev/shm (requests = limits). With --study, pod I runs 'pltlab reproduce STUDY --shard auto/N'
into /results/shard-I; with --matrix (shipped in the ConfigMap with its trace files) 'pltlab run
--matrix /etc/pltlab/matrix.yaml --shard auto/N' into /results/shard-I.jsonl. --merge-out FILE
writes the merge Job, to apply once the first has completed (kubectl wait
--for=condition=complete job/NAME): it writes the study's report into /results/merged.
A sweep with a shaped link runs as root with CAP_NET_ADMIN, CAP_SYS_ADMIN and /dev/net/tun from the
node (what the link needs today); one whose links are all "none" runs unprivileged. When the Job
has completed, merge the files of the results volume with 'pltlab merge'.`,
		Example: `  ./bin/pltlab k8s --study kakhki2017 --scale full --shards 64 --parallelism 16 --image registry.example/pltlab:v1 --out kakhki.yaml --merge-out kakhki-merge.yaml
  ./bin/pltlab k8s --matrix grid.yaml --shards 16 --parallelism 4 --image registry.example/pltlab:v1 --out grid-job.yaml
  ./bin/pltlab k8s --matrix grid.yaml --shards 16 --parallelism 4 --image localhost/pltlab:latest --results-claim sweeps --namespace lab`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.shield = setup.shieldNodes
			s, err := f.sweep()
			if err != nil {
				return err
			}
			o.AllowSharedNodes = shared
			y, err := cluster.K8s(s, o)
			if err != nil {
				return asUsage(err)
			}
			out := cmp.Or(f.out, "-")
			if mergeOut != "" {
				my, err := cluster.K8sMerge(s, o)
				if err != nil {
					return asUsage(err)
				}
				if err := checkOutputs(f.force, [2]string{"--out", out}, [2]string{"--merge-out", mergeOut}); err != nil {
					return err // before either file is written
				}
				if err := writeOutput(cmd.OutOrStdout(), mergeOut, f.force, func(w io.Writer) error { _, err := w.Write(my); return err }); err != nil {
					return err
				}
			}
			return writeOutput(cmd.OutOrStdout(), out, f.force, func(w io.Writer) error { _, err := w.Write(y); return err })
		},
	}
	f.register(cmd, `output file ("-" or none = stdout)`)
	fl := cmd.Flags()
	fl.IntVar(&o.Parallelism, "parallelism", 1, "pods running at once (at most one per node)")
	fl.StringVar(&o.Image, "image", "", "container image with pltlab and Chromium (see the Dockerfile); required")
	fl.StringVar(&o.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	fl.StringVar(&o.ResultsClaim, "results-claim", "", "existing PersistentVolumeClaim for the results (default: make one)")
	fl.StringVar(&o.ResultsSize, "results-size", "10Gi", "size of the claim made")
	fl.StringVar(&mergeOut, "merge-out", "", "also write the merge Job to this file (apply it after the shards' Job has completed)")
	fl.BoolVar(&shared, "allow-shared-nodes", false, "let several shards run on one node (they disturb each other's timing)")
	return cmd
}

// checkOutputs refuses, as usage errors before anything is written, output files (pairs of
// flag and path; "-" is stdout) that writeOutput would refuse, and two flags naming the same
// file (or both stdout), which would leave one output over the other.
func checkOutputs(force bool, outs ...[2]string) error {
	mode := outNew
	if force {
		mode = outReplace
	}
	for i, o := range outs {
		for _, p := range outs[:i] {
			if sameOutput(p[1], o[1]) {
				return usagef("bad %s %s: it is the %s file too; accepted a file of its own", o[0], o[1], p[0])
			}
		}
		if o[1] == "-" {
			continue
		}
		if _, err := checkOutPath(o[0], o[1], mode); err != nil {
			return err
		}
	}
	return nil
}

// sameOutput reports whether output paths a and b ("-" is stdout) name the same file: the same
// absolute path, or one existing file reached twice (a link).
func sameOutput(a, b string) bool {
	if a == "-" || b == "-" {
		return a == b
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
