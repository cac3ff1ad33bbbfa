package view

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/internal/quantity"
)

// funcs are the templates' helpers: numbers are formatted here (ms, CIs, p-values and percent
// differences as 'pltlab report' prints them, package quantity), computed in package analysis.
var funcs = template.FuncMap{
	"ms":    quantity.FormatMs,
	"ci":    quantity.FormatCI,
	"p":     quantity.FormatP,
	"pct":   quantity.FormatPct,
	"num":   num,
	"f2":    func(v float64) string { return fmtFloat(v, 2) },
	"f3":    func(v float64) string { return fmtFloat(v, 3) },
	"join":  strings.Join,
	"html":  func(s string) template.HTML { return template.HTML(s) },
	"slug":  slug,
	"bytes": fmtBytes,
	"inc":   func(i int) int { return i + 1 },
	"frame": frameURL,
}

func fmtFloat(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// num is the exact value of v for a data attribute (the shortest repr that parses back to v),
// "" for NaN and infinities (null in report --format json).
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func fmtBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// slug turns a verdict into a CSS class suffix: "not run" -> "not-run".
func slug(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }

var pages = template.Must(template.New("pages").Funcs(funcs).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.}} - pltlab view</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/static/view.css"></head><body>
<header><a class="brand" href="/">pltlab view</a><a href="/">result sets</a><a href="/compare">compare</a></header><main>
{{end}}
{{define "foot"}}</main></body></html>
{{end}}

{{define "compareform"}}<form class="compare" method="get" action="/compare"><strong>Compare</strong>
<select name="a" id="cmp-a">{{range .}}<option value="{{.Value}}"{{if .A}} selected{{end}}>{{.Label}}</option>{{end}}</select>
with <select name="b" id="cmp-b">{{range .}}<option value="{{.Value}}"{{if .B}} selected{{end}}>{{.Label}}</option>{{end}}</select>
<button type="submit" id="cmp-go">compare</button></form>
{{end}}

{{define "index"}}{{template "head" "result sets"}}
<h1>Result sets</h1>
<p class="note">Under {{join .Roots ", "}}. Runs, studies and sharded runs (shard files of one configuration merged); read-only.</p>
{{if .Cut}}<p class="warning">{{.Cut}}</p>{{end}}
<table class="sets"><thead><tr><th>result set</th><th>kind</th><th>date</th><th class="text">pages</th><th class="text">links</th><th>protocols, modes</th><th class="text">settings</th><th>loads measured</th><th>valid</th><th title="warm-ups included">made / scheduled</th><th>config hash</th><th>status</th></tr></thead><tbody>
{{range .Sets}}<tr><td><a class="set" href="/set/{{.Set.ID}}/">{{.Set.Name}}</a></td><td>{{.Kind}}</td><td class="date">{{.Date}}</td>
<td class="text">{{join .Pages "; "}}</td><td class="text">{{join .Links "; "}}</td><td>{{join .Protos ", "}}; {{join .Modes ", "}}</td><td class="text">{{join .Settings "; "}}</td>
<td>{{.Loads}}</td><td>{{.Valid}}</td><td>{{.Made}} / {{if .Scheduled}}{{.Scheduled}}{{else}}-{{end}}</td><td class="hash">{{or .Set.ConfigHash "-"}}</td>
<td>{{if .Err}}<span class="error">{{.Err}}</span>{{else}}{{range .Partial}}<span class="warning">{{.}}</span> {{end}}{{.Live}}{{end}}</td></tr>
{{else}}<tr><td colspan="12">No result files (.jsonl with records of schema v1) under these paths.</td></tr>{{end}}
</tbody></table>
{{if .Options}}{{template "compareform" .Options}}{{end}}
{{template "foot"}}{{end}}

{{define "live"}}<details class="live" id="live" data-events="{{.Base}}events" data-loads="{{.Loads}}"{{if .Open}} open{{end}}>
<summary><strong>Live</strong>: <span id="live-made">-</span> of <span id="live-scheduled">-</span> scheduled loads made (warm-ups included); <span id="live-loads">-</span> measured, <span id="live-valid">-</span> valid, <span id="live-corrupt">-</span> corrupt or refused lines skipped
<progress id="live-progress" value="0" max="1"></progress> <span class="note">{{if .Open}}being written; {{end}}updated <span id="live-updated">-</span></span>
<span id="live-stale" class="warning" hidden>new loads since this page was made: <a href="">reload</a> for the tables and figures below</span></summary>
<table><thead><tr><th>group</th><th>n</th><th>running median (ms)</th><th>95% CI</th></tr></thead><tbody id="live-medians"></tbody></table>
<table><thead><tr><th>latest loads</th><th>protocol</th><th>PLT (ms)</th><th>outcome</th></tr></thead><tbody id="live-recent"></tbody></table>
</details><script src="/static/live.js"></script>
{{end}}

{{define "groups"}}<table class="groups"><thead><tr><th>group</th><th>runs</th><th>valid</th><th>censored</th><th>invalid</th><th>lost</th><th>median (ms)</th><th>95% CI</th><th>p25</th><th>p75</th></tr></thead><tbody>
{{range .}}<tr class="group" data-protocol="{{.G.Protocol}}" data-page="{{.G.Page}}" data-link="{{.G.Link}}" data-mode="{{.G.Mode}}" data-settings="{{.G.Settings}}" data-median="{{num .G.Median}}">
<td><a class="group" href="{{.Href}}">{{.Label}}</a></td><td>{{.G.Runs}}</td><td>{{.G.Valid}}</td><td>{{.G.Censored}}</td><td>{{.G.InvalidTotal}}</td><td>{{.G.Lost}}</td>
<td>{{ms .G.Median .G.DeadlineMs}}</td><td>{{ci .G.CILow .G.CIHigh .G.DeadlineMs}}</td><td>{{ms .G.P25 .G.DeadlineMs}}</td><td>{{ms .G.P75 .G.DeadlineMs}}</td></tr>
{{end}}</tbody></table>
{{end}}

{{define "comparisons"}}{{if .}}<table class="comparisons"><thead><tr><th>comparison</th><th>n</th><th>ratio of medians</th><th>95% CI</th><th>diff</th><th>Mann-Whitney p</th><th>effect size A</th><th>Welch p</th><th>significant</th></tr></thead><tbody>
{{range .}}<tr class="comparison" data-protocol="{{.C.Protocol}}" data-baseline="{{.C.Baseline}}" data-page="{{.C.Page}}" data-link="{{.C.Link}}" data-mode="{{.C.Mode}}" data-p="{{num .C.MannWhitney.P}}">
<td>{{if .Href}}<a href="{{.Href}}">{{.Label}}</a>{{else}}{{.Label}}{{end}}</td><td>{{.C.N}} vs {{.C.BaselineN}}</td><td>{{f3 .C.Ratio}}</td><td>{{f3 .C.RatioLow}} .. {{f3 .C.RatioHigh}}</td><td>{{pct .C.DiffPct}}</td>
<td>{{p .C.MannWhitney.P}}{{if .C.MannWhitney.Exact}} (exact){{end}}</td><td>{{f3 .A}}</td><td>{{p .C.Welch.P}}</td><td>{{if .C.Significant}}yes (p &lt; {{.Alpha}}){{else}}no{{end}}</td></tr>
{{end}}</tbody></table>
<p class="note">Ratio = median of the first / median of the second; effect size A = P(a load of the first is slower than one of the second), ties counting one half (Vargha &amp; Delaney 2000; 0.5 = no effect, |A - 0.5| &gt;= 0.21 large); significant at Mann-Whitney p &lt; 0.01.</p>{{end}}
{{end}}

{{define "set"}}{{template "head" .Set.Name}}
<h1>{{.Set.Name}}</h1>
<p class="note">{{.Kind}}; files: {{join .Files ", "}}{{if .Set.ConfigHash}}; config hash {{.Set.ConfigHash}}{{end}}{{if .Skipped}}; {{.Skipped}}{{end}}</p>
{{range .Partial}}<p class="warning"><strong>{{.}}</strong></p>{{end}}
{{if .Err}}<p class="error">{{.Err}}</p>{{else}}
{{with .Study}}<h1 id="study">{{.Title}}</h1>{{if .Note}}<p class="warning">{{.Note}}</p>{{end}}
<section id="findings"><h2>Findings</h2>
<table class="findings"><thead><tr><th>#</th><th class="text">published finding</th><th class="text">source</th><th>verdict</th><th class="text">evidence</th><th class="text">how judged</th><th class="text">see</th></tr></thead><tbody>
{{range $i, $f := .Findings}}<tr class="finding"><td>{{inc $i}}</td><td class="text">{{.Claim}}</td><td class="text">{{.Source}}</td><td class="verdict v-{{slug .Verdict}}">{{.Verdict}}</td><td class="text">{{.Evidence}}</td><td class="text">{{.Criterion}}</td>
<td class="text">{{range $j, $a := .See}}{{if $j}}; {{end}}{{if .ID}}<a href="#{{.ID}}">{{.Title}}</a>{{else}}{{.Title}}{{end}}{{end}}</td></tr>
{{end}}</tbody></table></section>{{end}}
{{template "live" .}}
{{with .Study}}<div class="study-report">{{html .Body}}</div>{{end}}
{{with .Interop}}<section id="interop"><h2>Interop cases</h2>
<p class="note">A row per case, a column per client → server; each cell counts its runs' outcomes and takes the colour of the worst (pass, unsupported, fail, error). Each run's reason and evidence are below the grid.</p>
<table class="interop"><thead><tr><th class="text">case</th>{{range .Pairs}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range $i, $r := .Rows}}<tr><td class="text" title="{{.Rule}}"><a href="#io-{{$i}}">{{.Case}}</a></td>{{range .Cells}}{{if .}}<td class="{{.Class}}">{{.Counts}}</td>{{else}}<td class="io-none">not run</td>{{end}}{{end}}</tr>
{{end}}</tbody></table>
{{range $i, $r := .Rows}}<h3 id="io-{{$i}}">{{.Case}}</h3>{{if .Rule}}<p class="note">{{.Rule}}</p>{{end}}
{{range $j, $c := .Cells}}{{if $c}}{{range $c.Runs}}<details class="interop-run"><summary><span class="io-{{.Outcome}}">{{.Outcome}}</span> {{index $.Interop.Pairs $j}}: {{.Reason}}</summary><p class="note">link {{.Link}}; {{.Versions}}</p><pre>{{.Observed}}</pre></details>
{{end}}{{end}}{{end}}{{end}}</section>{{end}}
{{if or .Groups (not .Interop)}}<h2 id="groups">Groups</h2>
{{template "groups" .Groups}}
{{template "comparisons" .Comparisons}}
{{template "compareform" .Options}}{{end}}
{{if not .Study}}{{if or .Groups (not .Interop)}}<div class="report">{{html .Report}}</div>{{end}}{{end}}
{{end}}
{{template "foot"}}{{end}}

{{define "group"}}{{template "head" .Label}}
<p><a href="{{.Base}}">{{.Set.Name}}</a></p>
<h1>{{.Label}}</h1>
{{with .G}}<table class="stats"><thead><tr><th>runs</th><th>valid</th><th>timed out</th><th>network failures</th><th>invalid</th><th>lost to harness</th><th>median (ms)</th><th>95% CI of the median</th><th>coverage</th><th>mean</th><th>sd</th><th>cv</th><th>min</th><th>p5</th><th>p25</th><th>p75</th><th>p95</th><th>max</th></tr></thead>
<tbody><tr class="group" data-median="{{num .Median}}"><td>{{.Runs}}</td><td>{{.Valid}}</td><td>{{.TimedOut}}</td><td>{{.NetFailed}}</td><td>{{.InvalidTotal}}</td><td>{{.Lost}}</td><td>{{ms .Median .DeadlineMs}}</td><td>{{ci .CILow .CIHigh .DeadlineMs}}</td><td>{{f3 .CICoverage}}</td>
<td>{{ms .Mean 0}}</td><td>{{ms .SD 0}}</td><td>{{f3 .CV}}</td><td>{{ms .Min .DeadlineMs}}</td><td>{{ms .P5 .DeadlineMs}}</td><td>{{ms .P25 .DeadlineMs}}</td><td>{{ms .P75 .DeadlineMs}}</td><td>{{ms .P95 .DeadlineMs}}</td><td>{{ms .Max .DeadlineMs}}</td></tr></tbody></table>
{{range .Reasons}}<p class="note">invalid: {{.}}</p>{{end}}{{end}}
<div class="side"><figure id="ecdf">{{html .ECDF}}<figcaption>ECDF of the page-load time; the curve stays below 1 by the share of censored loads.</figcaption></figure>
<figure id="box">{{html .Box}}<figcaption>Box plot of the completed loads (box: type-7 quartiles, whiskers 1.5 IQR).</figcaption></figure></div>
<h2>Loads</h2>
<table class="loads"><thead><tr><th>run</th><th>time</th><th>PLT (ms)</th><th>TTFB (ms)</th><th>valid</th><th>outcome</th><th class="text">reason</th><th>observed protocol</th><th>artifacts</th></tr></thead><tbody>
{{range .Loads}}<tr class="load{{if .Median}} fresh{{end}}"><td><a class="load" href="{{.Href}}">run {{.R.Run}}</a>{{if .Median}} (median load){{end}}</td><td>{{.Time}}</td><td>{{f2 .R.PLTMs}}</td><td>{{f2 .R.TTFBMs}}</td>
<td class="{{if .R.Valid}}ok{{else}}bad{{end}}">{{.R.Valid}}</td><td>{{.Outcome}}</td><td class="text">{{.R.InvalidReason}}</td><td>{{.R.ObservedProtocol}}</td><td>{{len .R.Artifacts}}</td></tr>
{{end}}</tbody></table>
{{template "foot"}}{{end}}

{{define "load"}}{{template "head" .Title}}
<p><a href="{{.Base}}">{{.Set.Name}}</a>{{if .GroupHref}} / <a href="{{.GroupHref}}">{{.GroupLabel}}</a>{{end}}</p>
<h1>{{.Title}}</h1>
<dl class="facts">{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
{{if .Artifacts}}<h2>Evidence files</h2><ul class="artifacts">{{range .Artifacts}}<li>{{if .Href}}<a class="artifact" href="{{.Href}}" download>{{.Name}}</a> ({{.Kind}}, {{bytes .Size}}){{else}}{{.Name}} <span class="error">({{.Why}})</span>{{end}}</li>{{end}}</ul>{{end}}
{{if .Waterfall}}<h2>Waterfall</h2><figure id="waterfall">{{html .Waterfall}}<figcaption>Resources on one time axis (ms from navigation start): Resource Timing phases; connection cN per row (Chromium's connectionId in order of first use); milestones TTFB, FCP, DCL, load.</figcaption></figure>{{end}}
{{if .Visual}}<h2>Filmstrip and visual metrics</h2>{{with .Visual}}<p>SpeedIndex {{f2 .SpeedIndexMs}} ms, visually complete {{f2 .VisuallyCompleteMs}} ms{{if .LastVisualChangeMs}}, last visual change {{f2 .LastVisualChangeMs}} ms{{end}}.</p>
<div class="filmstrip">{{range .Filmstrip}}<div><img alt="{{f2 .Ms}} ms" src="{{frame .JPEG}}"><br>{{printf "%.0f" .Ms}} ms, {{.Pct}} %</div>{{end}}</div>{{end}}{{end}}
{{if .Resources}}<h2>Resources</h2><table class="resources"><thead><tr><th class="text">URL</th><th>protocol</th><th>connection</th><th>status</th><th>transfer</th><th>body</th><th>start (ms)</th><th>end (ms)</th></tr></thead><tbody>
{{range .Resources}}<tr><td class="text">{{.URL}}</td><td>{{.Protocol}}</td><td>{{.ConnectionID}}</td><td>{{.Status}}</td><td>{{.TransferSize}}</td><td>{{.EncodedBodySize}}</td><td>{{f2 .StartMs}}</td><td>{{f2 .EndMs}}</td></tr>{{end}}</tbody></table>{{end}}
{{if .Emulator}}<h2>Emulator counters</h2><table class="emulator"><thead><tr><th>direction</th><th>packets in</th><th>bytes in</th><th>packets out</th><th>bytes out</th><th>random-loss drops</th><th>queue drops</th><th>AQM drops</th><th>outage drops</th><th>other drops</th><th>max queueing delay (ms)</th></tr></thead><tbody>
{{range .Emulator}}<tr><td>{{.Name}}</td><td>{{.D.PacketsIn}}</td><td>{{.D.BytesIn}}</td><td>{{.D.PacketsOut}}</td><td>{{.D.BytesOut}}</td><td>{{.D.DropsLoss}}</td><td>{{.D.DropsQueue}}</td><td>{{.D.DropsAQM}}</td><td>{{.D.DropsOutage}}</td><td>{{.D.DropsOther}}</td><td>{{f2 .D.QueueDelayMaxMs}}</td></tr>{{end}}</tbody></table>{{end}}
{{template "foot"}}{{end}}

{{define "compare"}}{{template "head" "compare"}}
<h1>Compare</h1>
{{template "compareform" .Options}}
{{range .Errs}}<p class="error">{{.}}</p>{{end}}
{{range .Pairs}}<section class="pair"><h2>{{.A.Label}} <em>vs</em> {{.B.Label}}</h2>
{{template "groups" .Rows}}
{{template "comparisons" .Cmp}}
<div class="side"><figure class="ecdf">{{html .ECDF}}<figcaption>ECDFs of A and B on one axis.</figcaption></figure>
<div>{{if .Diff}}<h3>Settings that differ (recorded in the two median loads)</h3><table class="diff"><thead><tr><th>setting</th><th class="text">A</th><th class="text">B</th></tr></thead><tbody>{{range .Diff}}<tr><td>{{index . 0}}</td><td class="text">{{index . 1}}</td><td class="text">{{index . 2}}</td></tr>{{end}}</tbody></table>{{else}}<p class="note">No recorded setting differs between the two median loads.</p>{{end}}</div></div>
{{if .WaterfallA}}<h3>Waterfalls of the two median loads (one time axis)</h3>
<figure class="waterfall">{{html .WaterfallA}}<figcaption>A: <a href="{{.LoadA}}">median load of {{.A.Label}}</a></figcaption></figure>
<figure class="waterfall">{{html .WaterfallB}}<figcaption>B: <a href="{{.LoadB}}">median load of {{.B.Label}}</a></figcaption></figure>{{end}}
</section>{{end}}
{{range .FlowPairs}}<section class="pair"><h2>Bulk flow {{.Title}}: A <em>vs</em> B</h2>
<table class="flows"><thead><tr><th class="text">side</th>{{range $.FlowHeader}}<th>{{.}}</th>{{end}}</tr></thead><tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table>
{{if .Diff}}<h3>Settings that differ (recorded in the first flow of each)</h3><table class="diff"><thead><tr><th>setting</th><th class="text">A</th><th class="text">B</th></tr></thead><tbody>{{range .Diff}}<tr><td>{{index . 0}}</td><td class="text">{{index . 1}}</td><td class="text">{{index . 2}}</td></tr>{{end}}</tbody></table>{{else}}<p class="note">No recorded setting differs between the two groups' first flows.</p>{{end}}</section>{{end}}
{{range .Unmatched}}<p class="note">Only in one side: {{.}}</p>{{end}}
{{template "foot"}}{{end}}

{{define "error"}}{{template "head" .Title}}<h1>{{.Title}}</h1><p class="error">{{.Msg}}</p><p><a href="/">result sets</a></p>{{template "foot"}}{{end}}
`))
