package flows

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// settings returns the settings the records of a run of mix carry (result.Record.Settings,
// the one definition of a load's settings): the HTTP/3 stack and its default QUIC congestion
// controller, as experiment records them for loads, when the mix has a QUIC flow and the stack
// is not quic-go; none set otherwise (quic-go is the default, and a mix of TCP flows is not
// decided by the h3 stack). Never nil, so that a line without settings is one older than them.
func (p MixExperiment) settings(mix []Spec) *result.Settings {
	if p.H3Stack == "" || p.H3Stack == server.StackQUICGo || !slices.ContainsFunc(mix, isQUICSpec) {
		return &result.Settings{}
	}
	return &result.Settings{H3Stack: p.H3Stack, QUICCC: cmp.Or(p.QUICCC, server.DefaultNgtcp2CC)}
}

// wantFlow returns the settings part of the record of flow i of mix that p makes
// (result.Flow's setting fields: index, count, mix name, start, duration, bin), p's defaults
// applied.
func (p MixExperiment) wantFlow(mix []Spec, i int) *result.Flow {
	s := mix[i]
	return &result.Flow{FlowIndex: i, Flows: len(mix), Mix: Mix(mix), StartS: s.Start.Seconds(),
		DurationS: cmp.Or(s.Duration, p.Duration).Seconds(), BinMs: quantity.Ms(p.Bin)}
}

// checkResume refuses resume records of p's experiment made with other settings than p's
// (result.SettingDiffs of the record's Settings, unless the line is older than them, and of
// its flow's own settings against what p would write), so that runs of other settings are
// never completed into one experiment; the error names the run, the mix and the first
// difference. Records of mixes p does not run, or of
// other experiments, are left to done. p has its defaults applied.
func (p MixExperiment) checkResume() error {
	for _, r := range p.Resume {
		if !r.IsFlow() || r.Experiment != p.Experiment {
			continue
		}
		k := slices.IndexFunc(p.Mixes, func(m []Spec) bool { return Mix(m) == r.Mix })
		if k < 0 || r.FlowIndex < 0 || r.FlowIndex >= len(p.Mixes[k]) {
			continue
		}
		mix := p.Mixes[k]
		var d []result.Diff
		if r.Settings != nil { // else a line older than the recorded settings
			d = result.SettingDiffs(r.Settings, p.settings(mix))
		}
		for i := range d {
			d[i].Path = "settings." + d[i].Path
		}
		if len(d) == 0 {
			d = result.SettingDiffs(r.Flow, p.wantFlow(mix, r.FlowIndex))
		}
		if len(d) > 0 {
			return fmt.Errorf("run %d of mix %s was made with other settings (%s: %s in the file, %s from these flags): resume continues one configuration; start a new --out",
				r.Run, r.Mix, d[0].Path, d[0].A, d[0].B)
		}
	}
	return nil
}
