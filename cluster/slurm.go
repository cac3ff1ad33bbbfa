package cluster

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pltlab/pltlab/experiment"
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
// SlurmSubmitScript, MatrixFile), to be written into o.Dir and run with `sh o.Dir/submit.sh`:
//   - the job array (sbatch --array=0-(N-1)): task I runs `pltlab run --matrix matrix.yaml
//     --shard auto/N` into shard-I.jsonl (with --resume when the file exists: a requeued or
//     rerun task continues it), on --cpus-per-task whole cores (--hint=nomultithread: no two
//     tasks share a physical core) with the memory and wall time of s, logs in logs/;
//   - the final job, submitted with --dependency=afterany on the array so that it runs however
//     the tasks ended: `pltlab merge` (which exits 1 naming any missing shard) into merged.jsonl,
//     then `pltlab report` to report.md and report.html.
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
	plan, err := s.plan()
	if err != nil {
		return nil, err
	}
	name := s.name()
	n := s.Shards
	head := func(job string, cpus int, mem int, limit time.Duration, log string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "#!/bin/bash\n#SBATCH --job-name=%s\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n", job, cpus)
		fmt.Fprintf(&b, "#SBATCH --mem=%dM\n#SBATCH --time=%s\n#SBATCH --output=%s\n", mem, slurmTime(limit), filepath.Join(o.Dir, "logs", log))
		if o.Partition != "" {
			fmt.Fprintf(&b, "#SBATCH --partition=%s\n", o.Partition)
		}
		return b.String()
	}
	var shards strings.Builder
	shards.WriteString(head(name, s.CPUs, s.MemoryMiB, s.Time, "shard-%a.log"))
	fmt.Fprintf(&shards, "#SBATCH --array=0-%d\n#SBATCH --hint=nomultithread\n", n-1)
	fmt.Fprintf(&shards, "# pltlab sweep %s (config_hash %s): %d loads in %d shards; the cost model's estimate is %s\n",
		s.Config.Name, experiment.ConfigHash(s.Config), plan.Loads, n, plan.Estimate.Round(time.Second))
	shards.WriteString("# on one machine; per shard:")
	for _, p := range plan.Parts {
		fmt.Fprintf(&shards, " %s", p.Estimate.Round(time.Second))
	}
	fmt.Fprintf(&shards, ".\n# Shaped links need root today (CAP_NET_ADMIN, CAP_SYS_ADMIN, /dev/net/tun).\nset -euo pipefail\n")
	fmt.Fprintf(&shards, "out=%s\n", q(filepath.Join(o.Dir, "shard-${SLURM_ARRAY_TASK_ID}.jsonl")))
	shards.WriteString("# A requeued or rerun task continues its shard's file instead of starting over.\nresume=\nif [ -s \"$out\" ]; then resume=--resume; fi\n")
	args := append([]string{q(o.Pltlab), "run", "--matrix", q(filepath.Join(o.Dir, MatrixFile)),
		"--shard", fmt.Sprintf("auto/%d", n), "--out", `"$out"`, "$resume"}, quoteAll(o.RunArgs)...)
	fmt.Fprintf(&shards, "exec %s\n", strings.Join(args, " "))

	var merge strings.Builder
	merge.WriteString(head(name+"-merge", 1, 1024, 30*time.Minute, "merge.log"))
	fmt.Fprintf(&merge, `set -uo pipefail
cd %[1]s
# Exits 1 naming the missing or short shards; the union is written all the same.
%[2]s merge shard-*.jsonl --out merged.jsonl --force
status=$?
%[2]s report merged.jsonl --format markdown --out report.md || status=1
%[2]s report merged.jsonl --format html --out report.html || status=1
exit $status
`, q(o.Dir), q(o.Pltlab))

	submit := fmt.Sprintf(`#!/bin/sh
# Submits the %d shards of sweep %s as a Slurm job array and the merge as a job that runs
# after every task has ended (afterany), then prints both job IDs.
set -eu
mkdir -p %[3]s/logs
array=$(sbatch --parsable %[3]s/%[4]s)
array=${array%%%%;*}
merge=$(sbatch --parsable --dependency=afterany:$array %[3]s/%[5]s)
echo "shards: job $array (array 0-%[6]d); merge and report: job ${merge%%%%;*}"
`, n, s.Config.Name, q(o.Dir), SlurmShardsScript, SlurmMergeScript, n-1)

	return map[string][]byte{
		SlurmShardsScript: []byte(shards.String()),
		SlurmMergeScript:  []byte(merge.String()),
		SlurmSubmitScript: []byte(submit),
		MatrixFile:        s.Matrix,
	}, nil
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
