package result

// The one retry rule of every measurement and check (docs/design.md, "One retry rule"): a link
// self-check, a page load, a flow run, a highway2023 arm and a device calibration that missed
// for a reason its repeat need not share (the emulator late during it, a busy machine) is made
// once more, and one that misses twice stands as missed, so one host stall never costs a
// measurement while a link, page or budget that is really off fails both attempts. Every
// attempt leaves its evidence: a check its own line, a measurement the earlier attempts in the
// last one's record (EarlierAttempts).

// Attempts is how many times the rule makes a check or a measurement at most: 2, one repeat.
const Attempts = 2

// Retry calls try with attempt 1, 2, ... until try says that attempt stands (again false),
// returns an error, or Attempts attempts were made, and returns the last attempt's number and
// try's error. try decides what "missed" means for its kind; the rule decides how often.
func Retry(try func(attempt int) (again bool, err error)) (attempts int, err error) {
	for attempt := 1; ; attempt++ {
		again, err := try(attempt)
		if err != nil || !again || attempt >= Attempts {
			return attempt, err
		}
	}
}

// MarkLate makes recs, the records of one measurement (a load; a flow run's flows, which share
// its emulator counters), invalid when the emulator was late during it (Emulator.Late of the
// first), the reason naming the lateness and machine, the machine's load during it
// (hostload.Describe's sentence; "" when not measured), on top of any other reason. It
// reports whether the emulator was late.
func MarkLate(machine string, recs ...*Record) bool {
	if len(recs) == 0 || !recs[0].Emulator.Late() {
		return false
	}
	why := recs[0].Emulator.LateReason(machine)
	for _, r := range recs {
		w := why
		if r.InvalidReason != "" {
			w += "; " + r.InvalidReason
		}
		r.Valid, r.InvalidReason = false, w
	}
	return true
}

// Earlier summarises r, an attempt made again, for the record of the attempt after it
// (Record.EarlierAttempts): its PLT for a load, its steady-state goodput for a flow, why it was
// made again, the emulator's lateness, and the machine's busy and stolen shares during it
// (percent).
func Earlier(r *Record, busyPct, stealPct float64) EarlierAttempt {
	e := EarlierAttempt{Time: r.Time, InvalidReason: r.InvalidReason, LateMs: r.Emulator.LateMs(),
		HostBusyPct: busyPct, HostStealPct: stealPct, Artifacts: r.Artifacts}
	if r.Flow != nil {
		e.GoodputBps = r.GoodputBps
	} else {
		e.PLTMs = r.PLTMs
	}
	return e
}
