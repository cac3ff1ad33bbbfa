package cluster

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// SlurmOptions say where a Slurm sweep runs.
type SlurmOptions struct {
	// Dir is the sweep's directory as every node sees it (a shared file system), absolute: the
	// scripts, the matrix copy, the per-shard results, logs and the merged report go there.
	Dir string
	// Pltlab is the pltlab binary as every node sees it, absolute.
	Pltlab string
	// Partition is the Slurm partition ("" = the cluster's default).
	Partition string
	// RunArgs are extra arguments of every shard's 'pltlab run' (e.g. --chrome PATH).
	RunArgs []string
}

// The files Slurm writes into SlurmOptions.Dir.
const (
	// SlurmShardsScript is the job array: one task per shard.
	SlurmShardsScript = "shards.sbatch"
	// SlurmMergeScript is the final job: merge and report, after every task has ended.
	SlurmMergeScript = "merge.sbatch"
	// SlurmSubmitScript submits both, the second depending on the first.
	SlurmSubmitScript = "submit.sh"
	// MatrixFile is the copy of the matrix the jobs read.
	MatrixFile = "matrix.yaml"
)

// Slurm returns the files of a Slurm sweep, by name (SlurmShardsScript, SlurmMergeScript,
// SlurmSubmitScript, and MatrixFile with any trace files for a matrix sweep), to be written into
// o.Dir and run with `sh o.Dir/submit.sh`:
//   - the job array (sbatch --array=0-(N-1)): task I runs its shard into o.Dir/shard-I (a
//     study: `pltlab reproduce STUDY --scale S --shard auto/N --out shard-I`, writing
//     shard-I/results.jsonl; a matrix: `pltlab run --matrix matrix.yaml --shard auto/N` into
//     shard-I.jsonl), with --resume when its file exists, so a requeued (--requeue: a preempted
//     or failed node) or rerun task continues it; on --cpus-per-task whole cores
//     (--hint=nomultithread: no two tasks share a physical core, so a node runs at most
//     cores / plan.CPUsPerShard shards; --exclusive with s.Exclusive), with the memory and
//     wall time of s, logs in logs/;
//   - the final job, submitted with --dependency=afterany on the array so that it runs however
//     the tasks ended and names the missing shards (afterok would leave it pending for ever
//     after one failed task): a study's `pltlab reproduce STUDY --merge shard-*/results.jsonl
//     --out merged`, which writes the same report, findings and figures as an unsharded run and
//     exits 1 naming missing shards or loads; a matrix's `pltlab merge` and `pltlab report`.
//
// Errors: a Sweep or option that cannot work, named with what is accepted.
func Slurm(s Sweep, o SlurmOptions) (map[string][]byte, error) {
	if !filepath.IsAbs(o.Dir) || !filepath.IsAbs(o.Pltlab) {
		return nil, fmt.Errorf("bad directory %q or pltlab binary %q: accepted absolute paths that every node sees", o.Dir, o.Pltlab)
	}
	for _, p := range []string{o.Dir, o.Pltlab, o.Partition} {
		if strings.ContainsAny(p, "'\n") {
			return nil, fmt.Errorf("bad path or partition %q: accepted one without quotes or newlines", p)
		}
	}
	est, err := s.plan()
	if err != nil {
		return nil, err
	}
	shaped, err := s.shaped()
	if err != nil {
		return nil, err
	}
	name := s.name()
	n := s.Shards
	shards := slurmShards(s, o, est, shaped, name)
	merge := slurmMerge(s, o, est, name)

	submit := fmt.Sprintf(`#!/bin/sh
# Submits the %d shards of %s as a Slurm job array and the merge as a job that runs
# after every task has ended (afterany), then prints both job IDs.
set -eu
mkdir -p %[3]s/logs
array=$(sbatch --parsable %[3]s/%[4]s)
array=${array%%%%;*}
merge=$(sbatch --parsable --dependency=afterany:$array %[3]s/%[5]s)
echo "shards: job $array (array 0-%[6]d); merge and report: job ${merge%%%%;*}"
`, n, s.label(), q(o.Dir), SlurmShardsScript, SlurmMergeScript, n-1)

	files := map[string][]byte{
		SlurmShardsScript: []byte(shards),
		SlurmMergeScript:  []byte(merge),
		SlurmSubmitScript: []byte(submit),
	}
	if s.Study == nil {
		files[MatrixFile] = s.Matrix
		for name, b := range s.Traces {
			files[name] = b
		}
	}
	return files, nil
}

// slurmHead is a job script's first lines: its #SBATCH name, one task of cpus CPUs, memory
// (MiB), time limit, log file (in DIR/logs) and partition (o.Partition).
func slurmHead(o SlurmOptions, job string, cpus, mem int, limit time.Duration, log string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n#SBATCH --job-name=%s\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n", job, cpus)
	fmt.Fprintf(&b, "#SBATCH --mem=%dM\n#SBATCH --time=%s\n#SBATCH --output=%s\n", mem, slurmTime(limit), filepath.Join(o.Dir, "logs", log))
	if o.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", o.Partition)
	}
	return b.String()
}

// slurmShards is the array job's script (see Slurm): one task per shard, its estimate and
// limits in comments, a requeued task resuming its shard's file.
func slurmShards(s Sweep, o SlurmOptions, est Estimates, shaped bool, name string) string {
	n := s.Shards
	var shards strings.Builder
	shards.WriteString(slurmHead(o, name, s.CPUs, s.MemoryMiB, s.Time, "shard-%a.log"))
	fmt.Fprintf(&shards, "#SBATCH --array=0-%d\n#SBATCH --hint=nomultithread\n#SBATCH --requeue\n#SBATCH --open-mode=append\n", n-1)
	if s.Exclusive || s.ShieldCPU != nil {
		shards.WriteString("#SBATCH --exclusive\n")
	}
	if s.ShieldCPU != nil {
		fmt.Fprintf(&shards, "# --shield-cpu %d: each shard keeps CPU %d of its node for its own process, so it has the node\n# to itself (--exclusive) and runs as root there.\n", *s.ShieldCPU, *s.ShieldCPU)
	}
	fmt.Fprintf(&shards, "# pltlab %s: %d loads in %d shards; the cost model's estimate is %s\n",
		s.label(), est.Loads, n, est.Total.Round(time.Second))
	shards.WriteString("# on one machine; per shard:")
	for _, d := range est.Shards {
		fmt.Fprintf(&shards, " %s", d.Round(time.Second))
	}
	fmt.Fprintf(&shards, ".\n# Time limit %s = %d x the longest shard + %s; memory %d MiB for a shard modelled at %s.\n",
		slurmTime(s.Time), TimeMargin, TimeSlack, s.MemoryMiB, est.Footprint)
	if shaped {
		shards.WriteString("# Shaped links need root on the node, or pltlab's rootless mode (it re-runs itself in user\n# namespaces when started by another user; needs unprivileged user namespaces and /dev/net/tun).\n")
	}
	shards.WriteString("set -euo pipefail\n")
	var args []string
	if s.Study != nil {
		fmt.Fprintf(&shards, "out=%s\n", q(filepath.Join(o.Dir, "shard-${SLURM_ARRAY_TASK_ID}")))
		shards.WriteString("# A requeued or rerun task continues its shard's file instead of starting over.\nmode=--force\nif [ -s \"$out/results.jsonl\" ]; then mode=--resume; fi\n")
		args = append(append(append([]string{q(o.Pltlab)}, s.pltlabArgs()...), "reproduce"), quoteAll(s.Study.args())...)
		args = append(args,
			"--shard", fmt.Sprintf("auto/%d", n), "--out", `"$out"`, `"$mode"`)
	} else {
		fmt.Fprintf(&shards, "out=%s\n", q(filepath.Join(o.Dir, "shard-${SLURM_ARRAY_TASK_ID}.jsonl")))
		shards.WriteString("# A requeued or rerun task continues its shard's file instead of starting over.\nresume=\nif [ -s \"$out\" ]; then resume=--resume; fi\n")
		args = append(append([]string{q(o.Pltlab)}, s.pltlabArgs()...), "run", "--matrix", q(filepath.Join(o.Dir, MatrixFile)),
			"--shard", fmt.Sprintf("auto/%d", n), "--out", `"$out"`, "$resume")
	}
	args = append(args, quoteAll(o.RunArgs)...)
	fmt.Fprintf(&shards, "exec %s\n", strings.Join(args, " "))
	return shards.String()
}

// slurmMerge is the final job's script (see Slurm): a study's merge and report, or a matrix's
// merge and reports, naming what is missing.
func slurmMerge(s Sweep, o SlurmOptions, est Estimates, name string) string {
	var merge strings.Builder
	merge.WriteString(slurmHead(o, name+"-merge", 1, mergeMemoryMiB(est.Loads), mergeTime(est.Loads), "merge.log"))
	if s.Study != nil {
		fmt.Fprintf(&merge, `set -uo pipefail
cd %[1]s
# Writes merged/results.jsonl and the study's report, findings and figures, as an unsharded run
# would; exits 1 naming the missing shards or loads (the report of what is there is written).
exec %[2]s reproduce %[3]s --merge shard-*/results.jsonl --out merged --force
`, q(o.Dir), q(o.Pltlab), strings.Join(quoteAll(s.Study.args()), " "))
	} else {
		fmt.Fprintf(&merge, `set -uo pipefail
cd %[1]s
# Exits 1 naming the missing or short shards; the union is written all the same.
%[2]s merge shard-*.jsonl --out merged.jsonl --force
status=$?
%[2]s report merged.jsonl --format markdown --out report.md || status=1
%[2]s report merged.jsonl --format html --out report.html || status=1
exit $status
`, q(o.Dir), q(o.Pltlab))
	}
	return merge.String()
}

// slurmTime formats d as Slurm's D-HH:MM:SS, rounded up to a minute (sbatch(1), --time).
func slurmTime(d time.Duration) string {
	m := int((d + time.Minute - 1) / time.Minute)
	return fmt.Sprintf("%d-%02d:%02d:00", m/(24*60), m/60%24, m%60)
}

// q quotes s for the shell: single quotes, or none when s has only safe characters. A
// ${SLURM_...} reference is left for the shell to expand (in double quotes).
func q(s string) string {
	if strings.Contains(s, "${") {
		return `"` + s + `"`
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,%+@", r)) {
			safe = false
		}
	}
	if safe && s != "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = q(a)
	}
	return out
}
