package view

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// recentLoads is how many of the latest loads a live update lists.
const recentLoads = 10

// update is one server-sent event "update": the set's progress, running medians (the analysis
// of every line written so far) and its latest loads.
type update struct {
	Loads     int    `json:"loads"`
	Valid     int    `json:"valid"`
	Made      int    `json:"made"`
	Scheduled int    `json:"scheduled"`
	Updated   string `json:"updated"`
	// Corrupt counts the lines skipped as corrupt or refused so far, as the page's own count.
	Corrupt int          `json:"corrupt"`
	Groups  []liveGroup  `json:"groups"`
	Recent  []liveRecent `json:"recent"`
	Error   string       `json:"error,omitempty"`
}

type liveGroup struct {
	Label  string `json:"label"`
	Href   string `json:"href"`
	Median string `json:"median"`
	CI     string `json:"ci"`
	N      int    `json:"n"`
}

type liveRecent struct {
	Label    string `json:"label"`
	Href     string `json:"href"`
	Protocol string `json:"protocol"`
	PLT      string `json:"plt"`
	Outcome  string `json:"outcome"`
	Fresh    bool   `json:"fresh"`
}

// events streams an update when the page connects and whenever the set's files change (polled
// every Options.Poll), until the client goes away or the server shuts down.
func (s *Server) events(c *gin.Context, st *Set) {
	c.Header("Content-Type", "text/event-stream")
	c.Header("X-Accel-Buffering", "no")
	last, lastLoads := "", -1
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	first := true
	c.Stream(func(w io.Writer) bool {
		if !first {
			select {
			case <-c.Request.Context().Done():
				return false
			case <-tick.C:
			}
		}
		first = false
		stp := stamp(st.Files)
		if stp == last {
			return true
		}
		last = stp
		l := s.load(st, nil)
		u := liveUpdate(l, lastLoads)
		lastLoads = u.Loads
		c.SSEvent("update", u)
		return true
	})
}

// liveUpdate builds the update of l; loads after the first seen ones are marked fresh.
func liveUpdate(l *loaded, seen int) update {
	u := update{Updated: time.Now().UTC().Format("15:04:05"), Groups: []liveGroup{}, Recent: []liveRecent{}}
	if l.err != nil {
		u.Error = l.err.Error()
		return u
	}
	u.Corrupt = l.stats.Corrupt + l.stats.RefusedCount
	sched := map[string]int{}
	var loads []int
	for i, r := range l.recs {
		if r.Scheduled > 0 {
			sched[r.Experiment+"\x00"+r.Shard] = r.Scheduled
		}
		if r.IsLoad() || r.Kind == result.KindHarnessError {
			u.Made++
		}
		if r.IsLoad() && !r.Warmup {
			u.Loads++
			loads = append(loads, i)
			if result.Classify(r) == result.OutcomeValid {
				u.Valid++
			}
		}
	}
	for _, n := range sched {
		u.Scheduled += n
	}
	for _, g := range l.report.Groups {
		u.Groups = append(u.Groups, liveGroup{Label: l.label(g), Href: base(l.set) + "group/" + groupID(g),
			N: len(g.Sample), Median: quantity.FormatMs(g.Median, g.DeadlineMs), CI: quantity.FormatCI(g.CILow, g.CIHigh, g.DeadlineMs)})
	}
	for k := len(loads) - 1; k >= 0 && len(u.Recent) < recentLoads; k-- {
		r := l.recs[loads[k]]
		u.Recent = append(u.Recent, liveRecent{Label: fmt.Sprintf("%s run %d", r.Experiment, r.Run),
			Href: base(l.set) + "load/" + strconv.Itoa(loads[k]), Protocol: r.Protocol,
			PLT: fmtFloat(r.PLTMs, 1), Outcome: result.Classify(r).String(), Fresh: seen >= 0 && k >= seen})
	}
	return u
}
