package flows

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Job is one run of one mix in a schedule.
type Job struct {
	// Run is the repetition (0-based); Mix indexes the mixes given to Schedule.
	Run, Mix int
}

// Schedule returns runs repetitions of mixes flow mixes, each repetition a block in which the
// mixes come in an order shuffled by a generator seeded with (seed, repetition): no mix always
// runs first (or right after another), as page loads interleave their protocols.
func Schedule(mixes, runs int, seed int64) []Job {
	var out []Job
	for run := range runs {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(run)^0x6d6978))
		for _, m := range rng.Perm(mixes) {
			out = append(out, Job{Run: run, Mix: m})
		}
	}
	return out
}

// ParseMix parses a comma-separated list of flows ("h3,h1:cubic", see ParseSpec) into a mix.
func ParseMix(s string) ([]Spec, error) {
	var out []Spec
	for _, f := range strings.Split(s, ",") {
		sp, err := ParseSpec(f)
		if err != nil {
			return nil, fmt.Errorf("bad mix %q: %w", s, err)
		}
		out = append(out, sp)
	}
	return out, nil
}
