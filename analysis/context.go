package analysis

import (
	"slices"
	"time"

	"github.com/pltlab/pltlab/result"
)

// Context describes where and how the records of a report were measured: each field lists the
// distinct non-empty values seen, sorted.
type Context struct {
	Experiments []string `json:"experiments,omitempty"`
	// Browsers are Chromium versions (Record.Browser).
	Browsers []string `json:"browsers,omitempty"`
	// Kernels are kernel releases (Env.Kernel).
	Kernels []string `json:"kernels,omitempty"`
	// Pltlab are pltlab versions (Env.Pltlab).
	Pltlab []string `json:"pltlab,omitempty"`
	// Hosts are machine names (Env.Host).
	Hosts []string `json:"hosts,omitempty"`
	// QUIC are QUIC stacks (Env.QUIC).
	QUIC []string `json:"quic,omitempty"`
	// Shapers are link shapers (Link.Shaper).
	Shapers []string `json:"shapers,omitempty"`
	// TCPCC are congestion controls (Record.TCPCC).
	TCPCC []string `json:"tcp_cc,omitempty"`
	// TLSVersions are negotiated TLS versions.
	TLSVersions []string `json:"tls_versions,omitempty"`
	// Pages and Links are the page and link specs.
	Pages []string `json:"pages,omitempty"`
	Links []string `json:"links,omitempty"`
	// First and Last are the start times of the earliest and latest record (zero when unknown).
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
	// Records counts every record read; Loads the page loads; Warmups the excluded warm-ups.
	Records int `json:"records"`
	Loads   int `json:"loads"`
	Warmups int `json:"warmups"`
	// HarnessErrors counts the harness_error lines: scheduled loads the harness could not make
	// (warm-ups included; a load made later by a resumed run still counts here).
	HarnessErrors int `json:"harness_errors"`
	// ArtifactsFailed counts the distinct evidence files records list as not written whole
	// (result.Record.ArtifactsFailed; the flows of one run share theirs).
	ArtifactsFailed int `json:"artifacts_failed,omitempty"`
	// LinkChecks are the link self-check lines (Kind link_check), in input order.
	LinkChecks []*result.Record `json:"-"`
}

// buildContext collects the Context of recs.
func buildContext(recs []*result.Record) Context {
	sets := map[*[]string]map[string]bool{}
	var c Context
	add := func(dst *[]string, v string) {
		if v == "" {
			return
		}
		if sets[dst] == nil {
			sets[dst] = map[string]bool{}
		}
		sets[dst][v] = true
	}
	failed := map[string]bool{}
	for _, r := range recs {
		if r == nil {
			continue
		}
		for _, f := range r.ArtifactsFailed {
			failed[f.Path] = true
		}
		c.Records++
		c.noteTime(r.Time)
		add(&c.Experiments, r.Experiment)
		add(&c.Links, r.Link.Spec)
		add(&c.Shapers, r.Link.Shaper)
		if r.Env != nil {
			add(&c.Kernels, r.Env.Kernel)
			add(&c.Pltlab, r.Env.Pltlab)
			add(&c.Hosts, r.Env.Host)
			add(&c.QUIC, r.Env.QUIC)
		}
		if !r.IsLoad() {
			switch r.Kind {
			case result.KindLinkCheck:
				c.LinkChecks = append(c.LinkChecks, r)
			case result.KindHarnessError:
				c.HarnessErrors++
			}
			continue
		}
		if r.Warmup {
			c.Warmups++
		} else {
			c.Loads++
		}
		add(&c.Browsers, r.Browser)
		add(&c.TCPCC, r.TCPCC)
		add(&c.TLSVersions, r.TLSVersion)
		add(&c.Pages, r.Page.Spec)
	}
	c.ArtifactsFailed = len(failed)
	for dst, set := range sets {
		for v := range set {
			*dst = append(*dst, v)
		}
		slices.Sort(*dst)
	}
	return c
}

func (c *Context) noteTime(t time.Time) {
	if t.IsZero() {
		return
	}
	if c.First.IsZero() || t.Before(c.First) {
		c.First = t
	}
	if t.After(c.Last) {
		c.Last = t
	}
}
