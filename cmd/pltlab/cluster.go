package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/cluster"
	"github.com/pltlab/pltlab/experiment"
)

// sweepFlags are the flags 'pltlab slurm' and 'pltlab k8s' share.
type sweepFlags struct {
	matrix      string
	shards, cpu int
	memMiB      int
	time        time.Duration
	out         string
	force       bool
}

func (f *sweepFlags) register(cmd *cobra.Command, outHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&f.matrix, "matrix", "", "YAML matrix file of the sweep (as for 'pltlab run --matrix'); required")
	fl.IntVar(&f.shards, "shards", 0, "number of shards (see 'pltlab run --matrix FILE --shard 0/N --dry-run'); required")
	fl.IntVar(&f.cpu, "cpus", cluster.DefaultCPUs, "whole cores per shard")
	fl.IntVar(&f.memMiB, "mem", cluster.DefaultMemoryMiB, "memory per shard in MiB")
	fl.DurationVar(&f.time, "time", 0, "wall-time limit per shard (default: twice the longest shard's estimate + 10m)")
	fl.StringVar(&f.out, "out", "", outHelp)
	fl.BoolVar(&f.force, "force", false, "overwrite earlier output")
}

// sweep reads the matrix and builds the cluster.Sweep, as usage errors.
func (f *sweepFlags) sweep() (cluster.Sweep, error) {
	if f.matrix == "" {
		return cluster.Sweep{}, usagef("missing --matrix: give the sweep's YAML matrix file")
	}
	if f.shards < 1 {
		return cluster.Sweep{}, usagef("bad --shards %d: accepted 1..%d", f.shards, experiment.MaxShards)
	}
	b, err := os.ReadFile(f.matrix)
	if err != nil {
		return cluster.Sweep{}, usagef("bad --matrix: %v", err)
	}
	c, err := experiment.ReadMatrix(bytes.NewReader(b), f.matrix)
	if err != nil {
		return cluster.Sweep{}, asUsage(err)
	}
	if err := experiment.CheckSpecs(c); err != nil {
		return cluster.Sweep{}, asUsage(err)
	}
	return cluster.Sweep{Config: c, Matrix: b, Shards: f.shards, CPUs: f.cpu, MemoryMiB: f.memMiB, Time: f.time}, nil
}

func newSlurmCmd() *cobra.Command {
	var (
		f                         sweepFlags
		pltlab, partition, chrome string
	)
	cmd := &cobra.Command{
		Use:   "slurm --matrix FILE --shards N [--cpus 2] [--time 2h] [--out DIR]",
		Short: "Write a Slurm job array that runs a sweep's shards, and a final job that merges and reports",
		Long: `slurm writes into DIR (on a file system every node sees): shards.sbatch, a job array with one
task per shard ('pltlab run --matrix DIR/matrix.yaml --shard auto/N' into DIR/shard-I.jsonl, on
--cpus whole cores, logs in DIR/logs); merge.sbatch, a job that runs after every task has ended
and merges the shards (failing with the names of missing shards) and writes report.md and
report.html; submit.sh, which submits both; and a copy of the matrix. Nothing is submitted:
run 'sh DIR/submit.sh' on the cluster's login node. Shaped links need root on the nodes today.`,
		Example: `  ./bin/pltlab slurm --matrix grid.yaml --shards 8 --out /shared/sweeps/grid
  ./bin/pltlab slurm --matrix grid.yaml --shards 8 --cpus 4 --time 6h --partition measure --out /shared/sweeps/grid --force
  sh /shared/sweeps/grid/submit.sh`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
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
				if filepath.Ext(name) != ".yaml" {
					mode = 0o755
				}
				if err := os.WriteFile(filepath.Join(dir, name), files[name], mode); err != nil {
					return fmt.Errorf("write slurm files: %w", err)
				}
			}
			limit, _ := s.TimeLimit()
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/{%s,%s,%s,%s}: %d shards of %d cores, up to %s each\nsubmit with: sh %s\n",
				dir, cluster.SlurmShardsScript, cluster.SlurmMergeScript, cluster.SlurmSubmitScript, cluster.MatrixFile,
				s.Shards, f.cpu, limit, filepath.Join(dir, cluster.SlurmSubmitScript))
			return nil
		},
	}
	f.register(cmd, "directory for the scripts, results and report (shared by the nodes); required")
	cmd.Flags().StringVar(&pltlab, "pltlab", "", "pltlab binary as the nodes see it (default: this binary)")
	cmd.Flags().StringVar(&partition, "partition", "", "Slurm partition (default: the cluster's default)")
	cmd.Flags().StringVar(&chrome, "chrome", "", "Chromium binary on the nodes (default: chromium on their PATH)")
	return cmd
}

func newK8sCmd() *cobra.Command {
	var (
		f      sweepFlags
		o      cluster.K8sOptions
		shared bool
	)
	cmd := &cobra.Command{
		Use:   "k8s --matrix FILE --shards N --parallelism P --image IMAGE [--out FILE]",
		Short: "Write a Kubernetes Indexed Job that runs a sweep's shards, one pod per node",
		Long: `k8s writes the YAML for 'kubectl apply -f': a ConfigMap with the matrix, a ReadWriteMany
PersistentVolumeClaim for the results (unless --results-claim names one) and an Indexed Job of
--shards completions, --parallelism pods at once, one pod per node (required anti-affinity;
--allow-shared-nodes lifts it), each with --cpus whole cores (requests = limits). Pod I runs
'pltlab run --matrix /etc/pltlab/matrix.yaml --shard auto/N' into /results/shard-I.jsonl.
A sweep with a shaped link runs as root with CAP_NET_ADMIN, CAP_SYS_ADMIN and /dev/net/tun from the
node (what the link needs today); one whose links are all "none" runs unprivileged. When the Job
has completed, merge the files of the results volume with 'pltlab merge'.`,
		Example: `  ./bin/pltlab k8s --matrix grid.yaml --shards 16 --parallelism 4 --image registry.example/pltlab:v1 --out grid-job.yaml
  ./bin/pltlab k8s --matrix grid.yaml --shards 16 --parallelism 4 --image localhost/pltlab:latest --results-claim sweeps --namespace lab`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := f.sweep()
			if err != nil {
				return err
			}
			o.AllowSharedNodes = shared
			y, err := cluster.K8s(s, o)
			if err != nil {
				return asUsage(err)
			}
			out := f.out
			if out == "" {
				out = "-"
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
	fl.BoolVar(&shared, "allow-shared-nodes", false, "let several shards run on one node (they disturb each other's timing)")
	return cmd
}
