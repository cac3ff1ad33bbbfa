package experiment

import "github.com/pltlab/pltlab/plan"

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

// Order returns every load of c in the order to make them. Links come one after another (each
// is brought up once). Within a link, the warm-up loads come first, then the measured loads in
// c.Runs blocks; each block holds every (page, arm) cell once, in an order shuffled by a PCG
// seeded with c.Seed and the link's index (a randomized complete block design), so that drift
// over time never favours one protocol and every protocol has been measured the same number of
// times whenever a block ends (plan.Schedule). The same Config always gives the same order.
func Order(c Config) []Job {
	c = c.withDefaults()
	pj := plan.Schedule(len(c.Pages), len(c.Links), len(c.Arms), c.Runs, c.Warmup, c.Seed)
	jobs := make([]Job, len(pj))
	for i, j := range pj {
		jobs[i] = Job{Link: j.Link, Page: j.Page, Arm: c.Arms[j.Arm], Rep: j.Rep, Warmup: j.Warmup}
	}
	return jobs
}
