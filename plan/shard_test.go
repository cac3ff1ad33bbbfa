package plan

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name, in string
		env      func(string) string
		want     Shard
		err      string
	}{
		{"explicit", "2/4", env(), Shard{2, 4}, ""},
		{"first", "0/1", env(), Shard{0, 1}, ""},
		{"index too big", "4/4", env(), Shard{}, "0 <= I < N"},
		{"negative", "-1/4", env(), Shard{}, "0 <= I < N"},
		{"no slash", "3", env(), Shard{}, "accepted I/N"},
		{"garbage", "a/b", env(), Shard{}, "accepted I/N"},
		{"plus sign", "+1/2", env(), Shard{}, "0 <= I < N"},
		{"plus count", "0/+2", env(), Shard{}, "0 <= I < N"},
		{"auto plus count", "auto/+2", env("JOB_COMPLETION_INDEX", "0"), Shard{}, "accepted auto/N"},
		{"slurm from 0", "auto", env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "3"), Shard{3, 4}, ""},
		{"slurm from 1", "auto", env("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "4"), Shard{0, 4}, ""},
		{"slurm min max only", "auto", env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_MIN", "5", "SLURM_ARRAY_TASK_MAX", "6"), Shard{0, 2}, ""},
		{"slurm with count given", "auto/4", env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4"), Shard{2, 4}, ""},
		{"slurm count mismatch", "auto/3", env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4"), Shard{}, "has 4 tasks"},
		{"slurm step", "auto", env("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "4"), Shard{}, "not contiguous"},
		{"slurm no count", "auto", env("SLURM_ARRAY_TASK_ID", "2"), Shard{}, "SLURM_ARRAY_TASK_COUNT"},
		{"k8s", "auto/3", env("JOB_COMPLETION_INDEX", "2"), Shard{2, 3}, ""},
		{"k8s without count", "auto", env("JOB_COMPLETION_INDEX", "2"), Shard{}, "auto/N"},
		{"k8s index too big", "auto/2", env("JOB_COMPLETION_INDEX", "2"), Shard{}, "not below"},
		{"no engine", "auto", env(), Shard{}, "neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseShard(tt.in, tt.env)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error of more than one line: %q", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			if got.String() != shardString(got) {
				t.Fatalf("String() = %q", got.String())
			}
		})
	}
}

func shardString(s Shard) string {
	return string(rune('0'+s.Index)) + "/" + string(rune('0'+s.Count))
}

// FuzzParseShard checks that ParseShard never panics and accepts only shards in range, with
// one-line errors.
func FuzzParseShard(f *testing.F) {
	for _, s := range []string{"0/1", "3/4", "4/4", "auto", "auto/3", "-1/2", "1/", "/2", "auto/0", "9999/10000"} {
		f.Add(s, "2", "4")
	}
	f.Fuzz(func(t *testing.T, s, id, count string) {
		env := func(k string) string {
			switch k {
			case "SLURM_ARRAY_TASK_ID":
				return id
			case "SLURM_ARRAY_TASK_COUNT":
				return count
			}
			return ""
		}
		sh, err := ParseShard(s, env)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
			return
		}
		if sh.Index < 0 || sh.Index >= sh.Count || sh.Count > MaxShards {
			t.Fatalf("ParseShard(%q) = %+v", s, sh)
		}
	})
}
