package experiment

import "math/rand/v2"

// Job is one page load of an experiment.
type Job struct {
	// Link and Page index Config.Links and Config.Pages.
	Link, Page int
	// Arm is the protocol and mode to load with.
	Arm Arm
	// Rep numbers the measured loads of one cell from 0; warm-ups number from 0 on their own.
	Rep int
	// Warmup marks a warm-up load.
	Warmup bool
}

// Schedule returns every load of c in the order to make them. Links come one after another (each
// is brought up once). Within a link, the warm-up loads come first, then the measured loads in
// c.Runs blocks; each block holds every (page, arm) cell once, in an order shuffled by a PCG
// seeded with c.Seed and the link's index (a randomized complete block design), so that drift
// over time never favours one protocol and every protocol has been measured the same number of
// times whenever a block ends. The same Config always gives the same order.
func Schedule(c Config) []Job {
	c = c.withDefaults()
	var jobs []Job
	for l := range c.Links {
		rng := rand.New(rand.NewPCG(uint64(c.Seed), uint64(l)))
		var cells []Job
		for p := range c.Pages {
			for _, a := range c.Arms {
				cells = append(cells, Job{Link: l, Page: p, Arm: a})
			}
		}
		block := func(rep int, warmup bool) {
			order := rng.Perm(len(cells))
			for _, i := range order {
				j := cells[i]
				j.Rep, j.Warmup = rep, warmup
				jobs = append(jobs, j)
			}
		}
		for w := range c.Warmup {
			block(w, true)
		}
		for r := range c.Runs {
			block(r, false)
		}
	}
	return jobs
}
