// Package result defines the v1 page-load record and its JSON Lines encoding, shared by every other package.
package result

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Version is the schema version written in every record's "v" field. Readers refuse other versions.
const Version = 1

// Mode says whether a load was cold or warm (docs/design.md, "Measurement rules").
type Mode string

// The two measurement modes. A cold load has no cache, no reused connection and no TLS/QUIC
// session; a warm load follows a priming load whose connections were closed, so TLS resumption and
// 0-RTT are allowed but the HTTP cache is not.
const (
	Cold Mode = "cold"
	Warm Mode = "warm"
)

// Kind tells what a line of a result stream holds. The empty kind is a page load.
type Kind string

// The kinds of line a result stream holds.
const (
	// KindLoad is one page load; it is also what an empty "kind" means.
	KindLoad Kind = "load"
	// KindLinkCheck is the self-check of an emulated link made before loads used it.
	KindLinkCheck Kind = "link_check"
	// KindPlan is the first line of a sharded run: the experiment's configuration and the
	// shard's share (Record.Plan), from which a merge knows every shard's expected loads.
	KindPlan Kind = "plan"
	// KindHarnessError is a scheduled load the harness could not make (the browser would not
	// launch, the server's connections would not close, ...): the line holds the job (page, link,
	// protocol, mode, warmup, run) and Error. It is counted ("lost to harness"), never a
	// measurement.
	KindHarnessError Kind = "harness_error"
	// KindMerge is the line a merge of a sharded run's files writes: which shards it joined and
	// which it lacked (Record.Merge), so that every reader of the merged file knows whether it is
	// complete.
	KindMerge Kind = "merge"
	// KindInterop is one interop case against one server (Record.Interop holds the case's
	// record as package interop writes it): the study evolution's lines.
	KindInterop Kind = "interop_case"
)

// OriginConns counts the connections the server accepted during a load that served one host.
type OriginConns struct {
	// Host is the hostname.
	Host string `json:"host"`
	// Conns is the number of connections that served it (h1: up to six per host in Chromium).
	Conns int `json:"conns"`
	// Shared is how many of them also served another host of the page (coalesced).
	Shared int `json:"shared,omitempty"`
}

// Replay is what a replayed archive (pltlab run --page har:FILE) answered during one load.
type Replay struct {
	// Archive is the HAR file as given, Digest the hex SHA-256 of its bytes.
	Archive string `json:"archive" role:"setting"`
	Digest  string `json:"digest" role:"setting"`
	// Hits counts the requests answered from the archive; QueryMatches those of them matched
	// with a different query (same method, host and path).
	Hits         int `json:"hits" role:"measure"`
	QueryMatches int `json:"query_matches,omitempty" role:"measure"`
	// Misses counts the requests the archive lacks (answered 404); Missed lists the first of
	// them as "METHOD URL".
	Misses int      `json:"misses" role:"measure"`
	Missed []string `json:"missed,omitempty" role:"measure"`
	// Deterministic is true when the load ran with a fixed clock and seeded Math.random (run
	// --replay-deterministic, browser.DeterministicJS).
	Deterministic bool `json:"deterministic,omitempty" role:"setting"`
}

// Record is one page load, the unit of every result stream (one JSON object per line).
// Durations are float64 milliseconds measured by the browser's Navigation Timing (W3C Navigation
// Timing Level 2) relative to the navigation's startTime; sizes are bytes; rates are bit/s.
type Record struct {
	// V is the schema version; always Version when written by this package.
	V int `json:"v" role:"line"`
	// Kind is KindLoad (or empty) for a page load, KindLinkCheck for a link self-check line.
	Kind Kind `json:"kind,omitempty" role:"line"`
	// Experiment names the experiment (a matrix run or a reproduction) the record belongs to.
	Experiment string `json:"experiment" role:"line"`
	// Run is the load's index in its experiment's schedule (experiment.Order), from 0, so it
	// numbers the loads in the order they were made and a resumed run continues the numbering;
	// the shards of a sharded experiment hold disjoint runs. -1 on lines that are not scheduled
	// loads (link checks, plan lines).
	Run int `json:"run" role:"line"`
	// Attempt numbers the attempt the record is of: absent (0) for a load made once, 2 for a
	// load made again because the emulator was late during its first attempt
	// (OutcomeEmulatorLate). A scheduled load leaves one line whatever its attempts: the earlier
	// ones are summarised in EarlierAttempts, never written as loads of their own.
	Attempt int `json:"attempt,omitempty" role:"measure"`
	// EarlierAttempts summarises the attempts made before this one, in order (absent when the
	// load was made once).
	EarlierAttempts []EarlierAttempt `json:"earlier_attempts,omitempty" role:"measure"`
	// Scheduled is the number of loads (warm-ups included) in the experiment's schedule; an
	// experiment with fewer load and harness_error lines than that is partial (0 = not recorded).
	Scheduled int `json:"scheduled,omitempty" role:"line"`
	// Error says why the harness could not make the load; set only on KindHarnessError lines.
	Error string `json:"error,omitempty" role:"measure"`
	// Settings are the experiment's requested settings that change a measurement.
	Settings *Settings `json:"settings,omitempty" role:"mixed"`
	// Time is when the load started (RFC 3339 in JSON).
	Time time.Time `json:"time" role:"line"`
	// Warmup marks a load made only to warm up the setup; analysis excludes it.
	Warmup bool `json:"warmup" role:"line"`
	// Mode is Cold or Warm.
	Mode Mode `json:"mode" role:"setting"`
	// Protocol is the requested protocol: "h1", "h2" or "h3".
	Protocol string `json:"protocol" role:"setting"`
	// ObservedProtocol is the navigation's nextHopProtocol normalised to "h1", "h2" or "h3",
	// or the raw string as seen for anything else ("" when the browser gave none).
	ObservedProtocol string `json:"observed_protocol" role:"measure"`
	// Resources has one entry per subresource the browser fetched (Resource Timing).
	Resources []Resource `json:"resources" role:"measure"`
	// Document is the page's own fetch (the navigation, W3C Navigation Timing) in the shape of a
	// Resource: StartMs 0, EndMs = responseEnd; nil when unknown or in older records.
	Document *Resource `json:"document,omitempty" role:"measure"`
	// Visual holds the visual metrics of the load (opt-in: run --visual); nil when not measured.
	Visual *Visual `json:"visual,omitempty" role:"measure"`
	// Artifacts lists the load's evidence files (HAR, NetLog and its load index, qlogs, pcapng)
	// as slash-separated paths relative to the --artifacts directory; empty when none were kept.
	Artifacts []string `json:"artifacts,omitempty" role:"line"`
	// ArtifactsFailed lists the load's evidence files that were wanted but not written whole
	// (a write error, a full filesystem, a capture that lost packet events), each with the
	// error; a file listed here is never listed in Artifacts.
	ArtifactsFailed []ArtifactFailure `json:"artifacts_failed,omitempty" role:"line"`
	// ArtifactsDir is the absolute path of the --artifacts directory Artifacts are relative to,
	// so that a reader finds this run's files and no other run's of the same experiment name.
	ArtifactsDir string `json:"artifacts_dir,omitempty" role:"line"`
	// Page describes the page that was loaded.
	Page Page `json:"page" role:"setting"`
	// Link describes the emulated link the load went through.
	Link Link `json:"link" role:"setting"`
	// PLTMs is the page-load time: loadEventEnd - startTime, in ms. For a timed-out load it is the
	// deadline (a censored value: the true PLT is at least this).
	PLTMs float64 `json:"plt_ms" role:"measure"`
	// TTFBMs is responseStart - startTime of the navigation, in ms.
	TTFBMs float64 `json:"ttfb_ms" role:"measure"`
	// DCLMs is domContentLoadedEventEnd - startTime, in ms.
	DCLMs float64 `json:"dcl_ms" role:"measure"`
	// FCPMs is the first-contentful-paint time (Paint Timing), in ms; 0 when none was reported.
	FCPMs float64 `json:"fcp_ms" role:"measure"`
	// ConnectMs is connectEnd - connectStart of the navigation, in ms (0 on a reused connection).
	ConnectMs float64 `json:"connect_ms" role:"measure"`
	// TLSMs is connectEnd - secureConnectionStart of the navigation, in ms.
	TLSMs float64 `json:"tls_ms" role:"measure"`
	// Valid is true only when every check passed: the navigation and every resource used the
	// requested protocol and every object arrived whole.
	Valid bool `json:"valid" role:"measure"`
	// InvalidReason says which check failed; empty when Valid.
	InvalidReason string `json:"invalid_reason,omitempty" role:"measure"`
	// TimedOut marks a load that hit its deadline; PLTMs then holds the deadline.
	TimedOut bool `json:"timed_out" role:"measure"`
	// DeadlineMs is the per-load deadline in ms.
	DeadlineMs float64 `json:"deadline_ms,omitempty" role:"setting"`
	// WallMs is the wall-clock time the harness spent on the load, in ms (PLT plus overhead).
	WallMs float64 `json:"wall_ms,omitempty" role:"measure"`
	// Browser is the browser's product and version, e.g. "Chromium/156.0.8078.73".
	Browser string `json:"browser" role:"setting"`
	// TCPCC is kept for readers of records older than CC and holds the same value as CC (for
	// h3, despite its name, the QUIC stack's controller). New readers use CC.
	TCPCC string `json:"tcp_cc" role:"setting"`
	// CC is the congestion controller of the connection that carried the page, for any
	// transport: the TCP socket's (read back on the server, e.g. "cubic") or the QUIC stack's
	// (e.g. quic-go's NewReno, which cannot be changed). Records written before it existed have
	// only TCPCC, which holds the same value.
	CC string `json:"cc,omitempty" role:"setting"`
	// TLSVersion is the negotiated TLS version as seen by the server, e.g. "1.3".
	TLSVersion string `json:"tls_version" role:"setting"`
	// Resumed is true when the server saw a resumed TLS session on the page's connection.
	Resumed bool `json:"resumed" role:"measure"`
	// Used0RTT is true when the server accepted 0-RTT data on the page's connection.
	Used0RTT bool `json:"used_0rtt" role:"measure"`
	// Origins are, for a page with objects on other origins, the connections the server
	// accepted during the load per hostname (the page's and each origin's), in the order first
	// served; absent for a page on one origin. Coalesced is true when one connection served
	// several of them (h2 and h3 connection pooling: one certificate names every host and they
	// resolve to one address).
	Origins   []OriginConns `json:"origins,omitempty" role:"measure"`
	Coalesced bool          `json:"coalesced,omitempty" role:"measure"`
	// Replay is, for a load of a replayed HAR (page "har:FILE"), what the archive answered;
	// absent for generated pages. A load with misses is not valid.
	Replay *Replay `json:"replay,omitempty" role:"mixed"`
	// Emulator holds the emulated link's counters for the duration of this load; nil when unshaped.
	Emulator *Emulator `json:"emulator,omitempty" role:"measure"`
	// HostBusyPct is the share of the machine's CPU time, all its CPUs together, that was busy
	// during the load (the browser, the server and the emulator included), and HostStealPct the
	// share the hypervisor took from its virtual CPUs (/proc/stat "steal"), in percent; absent
	// when 0 or not measured. BrowserProcs is the number of Chromium processes alive on the
	// machine when the load ended (every browser of the run, with its helpers), and Browsers the
	// number of pltlab's browsers among them (main processes; browser.Instances).
	HostBusyPct  float64 `json:"host_busy_pct,omitempty" role:"measure"`
	HostStealPct float64 `json:"host_steal_pct,omitempty" role:"measure"`
	BrowserProcs int     `json:"browser_procs,omitempty" role:"measure"`
	Browsers     int     `json:"browsers,omitempty" role:"measure"`
	// Device is the emulated client device the load ran on (pltlab run --device), with its
	// budget and the slowdown measured when its browser was launched; nil for the desktop.
	Device *Device `json:"device,omitempty" role:"mixed"`
	// CPU is the CPU time the browser and the harness spent during the measured load; nil when
	// not measured (records before 2026-12-02, loads that failed before the navigation).
	CPU *CPU `json:"cpu,omitempty" role:"measure"`
	// Env holds facts about the machine and software the load ran on.
	Env *Env `json:"env,omitempty" role:"mixed"`
	// Check is the link self-check, set only on KindLinkCheck lines.
	Check *LinkCheck `json:"check,omitempty" role:"measure"`
	// Shard is the part of a sharded experiment the line belongs to, "I/N" (part I of N, from
	// 0; `pltlab run --shard`); empty when the experiment was not sharded.
	Shard string `json:"shard,omitempty" role:"line"`
	// ShardUnits is the digest (plan.Digest: 16 hex digits) of the units the line's shard was
	// given, which its plan line lists (Plan.Units): a merge checks each shard's lines against
	// its own record of them, never against a cut recomputed later. Absent when not sharded and
	// in lines of pltlab versions before 2026-12-02.
	ShardUnits string `json:"shard_units,omitempty" role:"line"`
	// ConfigHash identifies the experiment's configuration (pages, links, arms, runs, warm-ups,
	// timeout, seed, TCP congestion control, TLS version, cross traffic and the content digests
	// of the trace files the links read): 16 hex digits of a SHA-256, the same
	// for every shard of one sweep (experiment.ConfigHash). Empty in records older than it.
	ConfigHash string `json:"config_hash,omitempty" role:"line"`
	// Plan is set only on KindPlan lines.
	Plan *PlanLine `json:"plan,omitempty" role:"line"`
	// Merge is set only on KindMerge lines.
	Merge *Merge `json:"merge,omitempty" role:"line"`
	// Cross names the bulk flow kept running through the same link during the load (flows
	// spec PROTO:CC, e.g. "h1:cubic"), "" when none ran (`pltlab run --cross`).
	Cross string `json:"cross,omitempty" role:"setting"`
	// Interop is, on a KindInterop line, the interop case's own record (interop.Record's JSON:
	// case, server and its exact version and build, outcome, reason and the datagrams as
	// evidence), kept as written; nil on other lines. A study's line wraps it here; a line of
	// `pltlab interop --out` is the case's record itself, which Reader puts here whole.
	Interop json.RawMessage `json:"interop,omitempty" role:"measure"`
	// Flow holds a KindFlow line's fields, inlined at the top level of the JSON object; nil on
	// other lines.
	*Flow `role:"mixed"`
}

// PlanLine is the configuration of a sharded experiment and one shard's share, written on the
// shard's first line so that its files describe themselves (experiment.PlanRecord).
type PlanLine struct {
	// Pages and Links are the page and LINK specs, in the experiment's order.
	Pages []string `json:"pages"`
	Links []string `json:"links"`
	// Arms are the (protocol, mode) combinations, in order.
	Arms []PlanLineArm `json:"arms"`
	// Runs and Warmup are the measured and warm-up loads per cell.
	Runs   int `json:"runs"`
	Warmup int `json:"warmup"`
	// Seed seeds the order and the loss generators.
	Seed int64 `json:"seed"`
	// Settings are the settings every load line of the experiment carries (the deadline, TCP
	// congestion control, TLS version, device, HTTP/3 stack and its controller, ...; without
	// Overrides), inlined: a setting added to Settings is in the plan line and its hash
	// (plan.LineHash) with no change here.
	Settings
	// Cross is the cross-traffic flow spec kept running during the loads ("" for none).
	Cross string `json:"cross,omitempty"`
	// Loads is the number of loads (warm-ups included) of this shard.
	Loads int `json:"loads"`
	// Inputs are the files the links read (trace:FILE) with their content digests, which the
	// config hash covers; absent when none is read.
	Inputs []InputFile `json:"inputs,omitempty"`
	// Study is "STUDY/SCALE" when the shard is a study's (pltlab reproduce --shard), whose shares
	// are planned over all of its parts: such shards are merged by 'pltlab reproduce STUDY
	// --merge', not 'pltlab merge'. "" for a sharded 'pltlab run'.
	Study string `json:"study,omitempty"`
	// Units are the IDs of the units the shard was given (plan.BlockID: "L<link>/B<block>", or
	// "PART:L<link>/B<block>" and "flows:NAME" for a study), in plan order: the shard's
	// membership as cut when it ran. Absent in plan lines before 2026-12-02.
	Units []string `json:"units,omitempty"`
}

// InputFile is a file an experiment reads (a link's trace) and its content digest.
type InputFile struct {
	// Path is the file's path as the LINK spec gives it.
	Path string `json:"path"`
	// SHA256 is the lowercase hex SHA-256 of its content, or "unreadable: ERROR".
	SHA256 string `json:"sha256"`
}

// PlanLineArm is one (protocol, mode) arm of a Plan.
type PlanLineArm struct {
	// Protocol is "h1", "h2" or "h3".
	Protocol string `json:"protocol"`
	// Mode is Cold or Warm.
	Mode Mode `json:"mode"`
}

// Resource is one subresource fetch seen through Resource Timing (W3C Resource Timing Level 2).
type Resource struct {
	// URL is the resource's full URL.
	URL string `json:"url"`
	// Protocol is the resource's nextHopProtocol, normalised like Record.ObservedProtocol.
	Protocol string `json:"protocol"`
	// TransferSize is the bytes fetched including headers (0 when served from cache).
	TransferSize int64 `json:"transfer_size"`
	// EncodedBodySize is the bytes of the response body as received.
	EncodedBodySize int64 `json:"encoded_body_size"`
	// StartMs is the fetch's startTime relative to the navigation start, in ms.
	StartMs float64 `json:"start_ms"`
	// EndMs is the fetch's responseEnd relative to the navigation start, in ms.
	EndMs float64 `json:"end_ms"`
	// Status is the HTTP response status (responseStatus), 0 when the browser did not report it.
	Status int `json:"status,omitempty"`
	// ConnectStartMs, ConnectEndMs, TLSStartMs, RequestStartMs and ResponseStartMs are the
	// fetch's Resource Timing phase boundaries (connectStart, connectEnd, secureConnectionStart,
	// requestStart, responseStart; W3C Resource Timing Level 2), in ms from the navigation start.
	// On a reused connection connectStart = connectEnd (no connect phase); TLSStartMs is 0 when
	// no TLS handshake was made for this fetch. All 0 in records made before they existed.
	ConnectStartMs  float64 `json:"connect_start_ms,omitempty"`
	ConnectEndMs    float64 `json:"connect_end_ms,omitempty"`
	TLSStartMs      float64 `json:"tls_start_ms,omitempty"`
	RequestStartMs  float64 `json:"request_start_ms,omitempty"`
	ResponseStartMs float64 `json:"response_start_ms,omitempty"`
	// ConnectionID is Chromium's ID of the connection the fetch used (DevTools
	// Network.Response.connectionId, as a decimal string): the same ID is the same TCP connection
	// (h1, h2) or QUIC connection (h3). "" when unknown.
	ConnectionID string `json:"connection_id,omitempty"`
	// Source is where the entry came from: "" for the page's Resource Timing entry (the usual
	// case), "network" for an object Chromium gives no Resource Timing entry, built from the
	// load's DevTools Network events (a subresource of a cross-origin stylesheet fetched in
	// no-cors mode, such as a web font: docs/design.md, "Replaying a HAR").
	Source string `json:"source,omitempty"`
}

// SourceNetwork is Resource.Source of an entry built from DevTools Network events.
const SourceNetwork = "network"

// Page describes the loaded page.
type Page struct {
	// Spec is the page SPEC as given (a preset name or [COUNTx]SIZE[:TYPE][@ORIGIN] items).
	Spec string `json:"spec"`
	// TotalBytes is the sum of the objects' sizes in bytes (the HTML excluded).
	TotalBytes int64 `json:"total_bytes"`
	// Objects is the number of objects (images) on the page.
	Objects int `json:"objects"`
}

// Link describes the emulated link as configured.
type Link struct {
	// Spec is the LINK spec as given (a preset name or key=value items).
	Spec string `json:"spec"`
	// Inputs are the files the spec reads (trace:FILE), with the SHA-256 of their content when
	// the load was made: one spec over two trace contents is two links (Label).
	Inputs []InputFile `json:"inputs,omitempty"`
	// DownBps is the bottleneck rate towards the browser in bit/s (0 = unshaped).
	DownBps int64 `json:"down_bps"`
	// UpBps is the bottleneck rate from the browser in bit/s (0 = unshaped).
	UpBps int64 `json:"up_bps"`
	// RTTMs is the base round-trip time in ms (twice the one-way delay).
	RTTMs float64 `json:"rtt_ms"`
	// Loss is the per-direction Bernoulli loss probability in [0, 1].
	Loss float64 `json:"loss"`
	// QueueBytes is the droptail queue limit per direction in bytes (0 when given in packets).
	QueueBytes int64 `json:"queue_bytes"`
	// QueuePackets is the droptail queue limit per direction in packets (0 when given in bytes).
	QueuePackets int `json:"queue_packets,omitempty"`
	// QueueFloored is true when the default queue of one BDP was smaller than the default
	// floor (4 packets or 1 ms at the link rate, shaping.DefaultQueueFloor) and QueueBytes is
	// that floor.
	QueueFloored bool `json:"queue_floored,omitempty"`
	// JitterMs is the delay jitter in ms.
	JitterMs float64 `json:"jitter_ms,omitempty"`
	// JitterDist is the jitter's distribution when not uniform: normal, pareto or paretonormal
	// (netem's tables).
	JitterDist string `json:"jitter_dist,omitempty"`
	// MTU is the link MTU in bytes.
	MTU int `json:"mtu,omitempty"`
	// Shaper is "emu" (userspace TUN emulator), "netem" or "none".
	Shaper string `json:"shaper"`
	// Reorder is true when per-packet jitter may reorder packets (LINK key reorder=true).
	Reorder bool `json:"reorder,omitempty"`
	// Down and Up are each direction's impairments beyond rate, delay, Bernoulli loss and
	// droptail queue (absent when none is configured).
	Down LinkDir `json:"down,omitzero"`
	Up   LinkDir `json:"up,omitzero"`
	// OutageOnMs and OutageOffMs are the up and down durations of the link's outages in ms
	// (means when OutageRandom); 0 when the link has no outages.
	OutageOnMs  float64 `json:"outage_on_ms,omitempty"`
	OutageOffMs float64 `json:"outage_off_ms,omitempty"`
	// OutageRandom is true for exponentially distributed durations (like mm-onoff).
	OutageRandom bool `json:"outage_random,omitempty"`
	// OutageMode is "drop" (arrivals during an outage are dropped) or "hold" (queued).
	OutageMode string `json:"outage_mode,omitempty"`
	// Rebind is what the link's NAT rebinds ("port": the client's UDP source port; "addr": its
	// IPv4 source address and port), empty when it has no NAT; RebindFirstMs is the first
	// rebinding's time from the link's start and RebindEveryMs the interval after it (0: once).
	Rebind        string  `json:"rebind,omitempty"`
	RebindFirstMs float64 `json:"rebind_first_ms,omitempty"`
	RebindEveryMs float64 `json:"rebind_every_ms,omitempty"`
}

// LinkDir holds one direction's impairments beyond rate, delay and droptail queue. Zero fields
// are not configured.
type LinkDir struct {
	// Loss is the direction's mean loss rate in [0, 1] (Bernoulli, or the stationary loss rate
	// of the Gilbert-Elliott model).
	Loss float64 `json:"loss,omitempty"`
	// LossBurst is the mean loss-burst length in packets (loss=P%,burst=N); 0 = Bernoulli.
	LossBurst float64 `json:"loss_burst,omitempty"`
	// GEP, GER, GE1H and GE1K are the Gilbert-Elliott parameters in netem's order (p, r, 1-h,
	// 1-k), probabilities in [0, 1]; all 0 when the loss is Bernoulli.
	GEP  float64 `json:"ge_p,omitempty"`
	GER  float64 `json:"ge_r,omitempty"`
	GE1H float64 `json:"ge_1h,omitempty"`
	GE1K float64 `json:"ge_1k,omitempty"`
	// Corrupt is the probability in [0, 1] that a packet carrying a UDP or TCP payload has one
	// payload bit flipped, its transport checksum kept valid.
	Corrupt float64 `json:"corrupt,omitempty"`
	// DelayVarMs is the one-way delay variation in ms: the delay is redrawn uniformly from
	// [RTT/2 - DelayVarMs, RTT/2 + DelayVarMs] every DelayVarEveryMs.
	DelayVarMs      float64 `json:"delayvar_ms,omitempty"`
	DelayVarEveryMs float64 `json:"delayvar_every_ms,omitempty"`
	// ReorderProb is the probability in [0, 1] that a packet is held back ReorderDelayMs.
	ReorderProb    float64 `json:"reorder_prob,omitempty"`
	ReorderDelayMs float64 `json:"reorder_delay_ms,omitempty"`
	// Trace is the Mahimahi trace file giving the direction's delivery opportunities; its mean
	// rate is in the link's DownBps or UpBps.
	Trace string `json:"trace,omitempty"`
	// AQM is the queue discipline when not droptail: "drophead", "codel", "pie" or "fq_codel".
	AQM string `json:"aqm,omitempty"`
	// AQMTargetMs and AQMIntervalMs are CoDel's target and interval, or PIE's target and update
	// interval, in ms.
	AQMTargetMs   float64 `json:"aqm_target_ms,omitempty"`
	AQMIntervalMs float64 `json:"aqm_interval_ms,omitempty"`
	// ECN is true when the AQM marks ECN-capable packets instead of dropping them.
	ECN bool `json:"ecn,omitempty"`
	// BleachECN is true when the link clears the ECN field of every packet it delivers this
	// way to Not-ECT (bleach=ecn), as a middlebox that rewrites the old TOS byte does.
	BleachECN bool `json:"bleach_ecn,omitempty"`
}

// Emulator holds one load's emulator counters per direction.
type Emulator struct {
	// Down is the direction towards the browser (server to client).
	Down Direction `json:"down"`
	// Up is the direction from the browser (client to server).
	Up Direction `json:"up"`
	// LateBoundMs is the release lateness in ms above which the load was not a valid
	// measurement (OutcomeEmulatorLate), as the harness applied it; absent in records written
	// before it was recorded, which are judged by LatenessBoundMs.
	LateBoundMs float64 `json:"late_bound_ms,omitempty"`
	// Process is where the emulator's forwarders ran: "own" (an emulator process of their
	// own, every thread real-time) or "shared" (pltlab's process, beside the server and the
	// harness); absent in records written before it was recorded (shared).
	Process string `json:"process,omitempty"`
}

// EarlierAttempt is what an attempt at a page load that was made again left: when it started,
// what it measured and why it did not count.
type EarlierAttempt struct {
	// Time is when the attempt started.
	Time time.Time `json:"time"`
	// PLTMs is the PLT it measured, in ms (not a measurement of the link: see InvalidReason);
	// 0 for a flow.
	PLTMs float64 `json:"plt_ms"`
	// GoodputBps is the steady-state goodput a flow's attempt measured, bit/s (0 for a load).
	GoodputBps float64 `json:"goodput_bps,omitempty"`
	// InvalidReason says why it was made again ("emulator late: ...").
	InvalidReason string `json:"invalid_reason"`
	// LateMs is the emulator's largest release lateness during it, in ms.
	LateMs float64 `json:"late_ms"`
	// HostBusyPct and HostStealPct are the machine's load during it (as Record's).
	HostBusyPct  float64 `json:"host_busy_pct,omitempty"`
	HostStealPct float64 `json:"host_steal_pct,omitempty"`
	// Artifacts lists its evidence files (relative to the artifacts directory), kept whole.
	Artifacts []string `json:"artifacts,omitempty"`
}

// Label names the link for grouping: its spec, and when it reads files, their contents'
// digests ("down=trace:a.trace [a.trace sha256 1f2e3d4c5b6a]"), so that loads over one spec
// with different trace contents are never pooled.
func (l Link) Label() string {
	if len(l.Inputs) == 0 {
		return l.Spec
	}
	var parts []string
	for _, f := range l.Inputs {
		parts = append(parts, fmt.Sprintf("%s sha256 %.12s", f.Path, f.SHA256))
	}
	return l.Spec + " [" + strings.Join(parts, ", ") + "]"
}

// PageLabel names the record's page for grouping: its spec, and for a replayed archive (page
// "har:FILE") the digest of the archive's bytes ("har:a.har [archive sha256 1f2e3d4c5b6a]"),
// so that loads of one spec over two different archives are never pooled (as Link.Label does
// for trace files).
func (r *Record) PageLabel() string {
	if r.Replay == nil || r.Replay.Digest == "" {
		return r.Page.Spec
	}
	return fmt.Sprintf("%s [archive sha256 %.12s]", r.Page.Spec, r.Replay.Digest)
}

// Merge is what a merge of a sharded run's files found: the run, its shard count, the shards
// present, and what it lacked.
type Merge struct {
	// Of names what was merged: a study and scale ("carlucci2015/smoke") or an experiment.
	Of string `json:"of"`
	// Shards is the run's number of shards; Present lists those with at least one line ("1/2").
	Shards  int      `json:"shards"`
	Present []string `json:"present"`
	// Missing lists the shards that left no line; Short says, per shard and part, how many of
	// its loads or flow lines are missing.
	Missing []string `json:"missing,omitempty"`
	Short   []string `json:"short,omitempty"`
}

// Partial returns what the merge lacked in one line ("" when it is complete): "PARTIAL: merged
// 1 of 2 shards of carlucci2015/smoke: shard 2/2 left no line; ...".
func (m *Merge) Partial() string {
	if m == nil || len(m.Missing) == 0 && len(m.Short) == 0 {
		return ""
	}
	var parts []string
	for _, s := range m.Missing {
		parts = append(parts, "shard "+s+" left no line")
	}
	parts = append(parts, m.Short...)
	return fmt.Sprintf("PARTIAL: merged %d of %d shards of %s: %s; the results cover what is there (rerun what is missing, with --resume, and merge again)",
		len(m.Present), m.Shards, m.Of, strings.Join(parts, "; "))
}

// MergeNotes returns Merge.Partial of every merge line of recs that lacked something, in order.
func MergeNotes(recs []*Record) []string {
	var out []string
	for _, r := range recs {
		if r != nil && r.Kind == KindMerge {
			if p := r.Merge.Partial(); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// LateMs is the larger of the two directions' largest release lateness that no host freeze
// explains (Direction.OwnLateMs), in ms: the lateness the bound judges.
func (e *Emulator) LateMs() float64 { return max(e.Down.OwnLateMs(), e.Up.OwnLateMs()) }

// RawLateMs is the larger of the two directions' largest release lateness, in ms, host freezes
// included.
func (e *Emulator) RawLateMs() float64 { return max(e.Down.TimingErrMaxMs, e.Up.TimingErrMaxMs) }

// HostFreezeMs is the larger of the two directions' HostFreezeMs: the most lateness of one
// release a host freeze explained, in ms (0 when none).
func (e *Emulator) HostFreezeMs() float64 { return max(e.Down.HostFreezeMs, e.Up.HostFreezeMs) }

// LatenessBoundMs is the most release lateness, in ms, that a measurement through the userspace
// emulator accepts: the emulator line of a link check fails above it, and a page load during
// which a packet left later than this after its scheduled time is not a valid measurement
// (OutcomeEmulatorLate). 5 ms: a tenth of the 50 ms RTT of the carlucci2015 link and under 1 %
// of the PLTs the studies measure (0.5 s and more), so lateness within it moves no PLT beyond
// its noise (CV 3-11 %), while the 36-62 ms stalls the emulator had (docs/design.md, "The
// emulator's stalls") are refused; the quiet-machine target is 2 ms (BENCHMARKS.md).
const LatenessBoundMs = 5.0

// LateBound is the lateness bound, in ms, that applies to the load e was recorded for: the
// recorded one, else LatenessBoundMs.
func (e *Emulator) LateBound() float64 {
	if e.LateBoundMs > 0 {
		return e.LateBoundMs
	}
	return LatenessBoundMs
}

// Late reports whether the emulator released a packet later than its bound during the load.
func (e *Emulator) Late() bool { return e != nil && e.LateMs() > e.LateBound() }

// LateReason is the invalid reason of a measurement during which the emulator was late
// (Late): by how much a packet left after its time, in which direction, beyond the host's
// freezes when any were taken off, against the bound; load names the machine's load during
// it ("" when not measured).
func (e *Emulator) LateReason(load string) string {
	dir := "down"
	if e.Up.OwnLateMs() > e.Down.OwnLateMs() {
		dir = "up"
	}
	if load != "" {
		load = " (" + load + ")"
	}
	if f := e.HostFreezeMs(); f > 0 {
		return fmt.Sprintf("emulator late: a packet left %.2f ms after its time beyond the host's freezes (%s; %.2f ms before, up to %.2f ms taken off), bound %.2f ms%s",
			e.LateMs(), dir, e.RawLateMs(), f, e.LateBound(), load)
	}
	return fmt.Sprintf("emulator late: a packet left %.2f ms after its time (%s), bound %.2f ms%s", e.LateMs(), dir, e.LateBound(), load)
}

// Direction holds the counters of one direction of an emulated link over one interval: one load
// (in warm mode, the measured load after the priming one), from just before it starts to just
// after it ends. A packet counts in when it enters the link and out when it leaves, each in the
// interval where that happens: one still queued or in flight at the end of the previous interval
// counts out only, one still in the link at the end counts in only. So PacketsIn - PacketsOut -
// drops is the change in the packets the link holds over the interval, which may be negative
// (packets_out > packets_in with no drop is not a fault).
type Direction struct {
	// PacketsIn and BytesIn count IP packets offered to the link (bytes are whole IP packets).
	PacketsIn int64 `json:"packets_in"`
	BytesIn   int64 `json:"bytes_in"`
	// PacketsOut and BytesOut count IP packets delivered by the link.
	PacketsOut int64 `json:"packets_out"`
	BytesOut   int64 `json:"bytes_out"`
	// DropsLoss counts packets dropped by the configured random loss.
	DropsLoss int64 `json:"drops_loss"`
	// DropsQueue counts packets dropped because the droptail queue was full.
	DropsQueue int64 `json:"drops_queue"`
	// DropsOther counts packets lost outside the model (device errors); should be 0.
	DropsOther int64 `json:"drops_other"`
	// DropsAQM counts packets dropped by the AQM (CoDel, PIE, FQ-CoDel).
	DropsAQM int64 `json:"drops_aqm,omitempty"`
	// DropsOutage counts packets dropped because they arrived during an outage.
	DropsOutage int64 `json:"drops_outage,omitempty"`
	// HeldOutage counts packets that arrived during an outage and were held (outage_mode=hold).
	HeldOutage int64 `json:"held_outage,omitempty"`
	// LossBursts counts runs of consecutive random-loss drops; LossBurstMean is DropsLoss divided
	// by it (packets).
	LossBursts    int64   `json:"loss_bursts,omitempty"`
	LossBurstMean float64 `json:"loss_burst_mean,omitempty"`
	// MarksCE counts packets marked Congestion Experienced by the AQM (RFC 3168).
	MarksCE int64 `json:"marks_ce,omitempty"`
	// Corrupted counts delivered packets whose UDP or TCP payload the link corrupted (one bit
	// flipped, transport checksum kept valid); they count in PacketsOut too.
	Corrupted int64 `json:"corrupted,omitempty"`
	// Bleached counts delivered packets whose ECN field the link cleared from ECT(0), ECT(1) or
	// CE to Not-ECT (bleach=ecn); they count in PacketsOut too.
	Bleached int64 `json:"bleached,omitempty"`
	// Rebinds counts the NAT rebindings the link made (rebind=, up direction): times the
	// client's UDP bindings moved to fresh ports, and for rebind=addr another address.
	Rebinds int64 `json:"rebinds,omitempty"`
	// Unbound counts datagrams the link delivered that its NAT dropped, addressed to a binding
	// no longer in force (rebind=, down direction); they count in PacketsOut too.
	Unbound int64 `json:"unbound,omitempty"`
	// Reordered counts delivered packets that were reordered (RFC 4737 section 3.3), whatever
	// caused it; ReorderRatio is Reordered / PacketsOut (RFC 4737 section 4.1).
	Reordered    int64   `json:"reordered,omitempty"`
	ReorderRatio float64 `json:"reorder_ratio,omitempty"`
	// ReorderExtentMax and ReorderExtentMean summarise the reordering extents (RFC 4737
	// section 4.2.1) of the reordered packets, in packets.
	ReorderExtentMax  int64   `json:"reorder_extent_max,omitempty"`
	ReorderExtentMean float64 `json:"reorder_extent_mean,omitempty"`
	// QueueDelayP50Ms, QueueDelayP99Ms and QueueDelayMaxMs summarise the time packets waited in
	// the droptail queue before serialization, in ms.
	QueueDelayP50Ms float64 `json:"queue_delay_p50_ms"`
	QueueDelayP99Ms float64 `json:"queue_delay_p99_ms"`
	QueueDelayMaxMs float64 `json:"queue_delay_max_ms"`
	// TimingErrP50Ms, TimingErrP99Ms and TimingErrMaxMs summarise the emulator's own timing error:
	// actual minus scheduled delivery time, in ms.
	TimingErrP50Ms float64 `json:"timing_err_p50_ms"`
	TimingErrP99Ms float64 `json:"timing_err_p99_ms"`
	TimingErrMaxMs float64 `json:"timing_err_max_ms"`
	// HostFreezeMs is the most release lateness, in ms, that a freeze of the host explained and
	// that was taken off (at most HostFreezeAllowanceMs per release), HostFreezeReleases how many
	// late releases it was taken off, and TimingErrOwnMaxMs the largest lateness left once it
	// was: a release later than 1 ms whose CPU the hypervisor held (the idle-poll spinner of
	// that CPU saw the time stolen, package idlepoll) while the packet waited. All three are 0
	// when no freeze explained anything; then the lateness that counts is TimingErrMaxMs
	// (OwnLateMs).
	HostFreezeMs       float64 `json:"host_freeze_ms,omitempty"`
	HostFreezeReleases int64   `json:"host_freeze_releases,omitempty"`
	TimingErrOwnMaxMs  float64 `json:"timing_err_own_max_ms,omitempty"`
	// Stalls counts the emulator's stall events in the interval: runs of releases later than
	// LatenessBoundMs that one stop of the releasing thread made (emu.Counters.Stalls), whatever
	// stopped it; StalledReleases counts the releases in them. 0 on a steady host.
	Stalls          int64 `json:"stalls,omitempty"`
	StalledReleases int64 `json:"stalled_releases,omitempty"`
	// StallSpans are those stalls on the wall clock (the first 64 of the interval); kept in
	// memory for the link check, which leaves out the probes they overlap, and not written.
	StallSpans []StallSpan `json:"-"`
}

// StallSpan is one stall event of the emulator: From is the scheduled release time of its first
// late packet, To the release of its last; LateMs is its largest lateness in ms, OwnLateMs the
// largest once host freezes are taken off as a load's are (Direction.OwnLateMs), and Releases
// its packets released later than LatenessBoundMs.
type StallSpan struct {
	From, To          time.Time
	LateMs, OwnLateMs float64
	Releases          int64
}

// HostFreezeAllowanceMs is the most lateness, in ms, that a freeze of the host may explain for
// one release (Direction.HostFreezeMs). The development VM's host holds a virtual CPU for 3-10
// ms several times a minute, and now and then for 15-66 ms (docs/design.md, "Host freezes"):
// the whole guest stands still then, endpoints and emulator alike, so a packet released late by
// such a freeze is the machine's delay, not the emulator's, and it is recorded as such. 20 ms
// is four lateness bounds and 2 % of a 1 s PLT; a longer freeze counts beyond it, so a machine
// whose host stops it for longer fails the checks as before.
const HostFreezeAllowanceMs = 20.0

// OwnLateMs is the direction's largest release lateness, in ms, that no host freeze explains:
// TimingErrOwnMaxMs when a freeze was taken off (HostFreezeMs > 0), else TimingErrMaxMs.
func (d Direction) OwnLateMs() float64 {
	if d.HostFreezeMs > 0 {
		return d.TimingErrOwnMaxMs
	}
	return d.TimingErrMaxMs
}

// Env holds facts about the machine and software a load ran on.
type Env struct {
	// Pltlab is the pltlab version.
	Pltlab string `json:"pltlab,omitempty" role:"setting"`
	// Kernel is the running kernel's release (uname -r).
	Kernel string `json:"kernel,omitempty" role:"setting"`
	// Host is the machine's hostname.
	Host string `json:"host,omitempty" role:"setting"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus,omitempty" role:"setting"`
	// QUIC names the QUIC stack and version, e.g. "quic-go v0.65.0".
	QUIC string `json:"quic,omitempty" role:"setting"`
	// UDPRcvBuf and UDPSndBuf are the QUIC socket buffer sizes obtained, in bytes.
	UDPRcvBuf int `json:"udp_rcvbuf,omitempty" role:"setting"`
	UDPSndBuf int `json:"udp_sndbuf,omitempty" role:"setting"`
	// Seed is the experiment's seed for ordering and loss.
	Seed int64 `json:"seed,omitempty" role:"line"`
	// UserNS is true when the load was made inside a user namespace: a rootless run (pltlab
	// re-runs itself there when not root), in which the emulator gets no real-time priority.
	UserNS bool `json:"user_ns,omitempty" role:"setting"`
	// IdlePollCPUs is the number of CPUs that an idle-priority spinner kept from halting while
	// the process measured (pltlab --idle-poll; docs/design.md, "The emulator's stalls"): 0 or
	// absent when none did.
	IdlePollCPUs int `json:"idle_poll_cpus,omitempty" role:"setting"`
	// ShieldCPU is the CPU kept for the link emulator while the process measured (pltlab
	// --shield-cpu: every other task, browser and server included, was moved off it;
	// docs/design.md, "A shielded CPU"); absent when none was.
	ShieldCPU *int `json:"shield_cpu,omitempty" role:"setting"`
	// BrowserPer says which loads of a link shared one browser process: "protocol" (one browser
	// per protocol serves every page of the link, since 2026-12-02); absent in older records,
	// whose runner launched one browser per page and protocol.
	BrowserPer string `json:"browser_per,omitempty" role:"setting"`
}

// LinkCheck is the result of measuring an emulated link before it is used.
type LinkCheck struct {
	// Pass is true when every measured line is within its tolerance.
	Pass bool `json:"pass"`
	// RTTMinMs, RTTMedianMs and RTTMaxMs summarise the idle RTT probes, in ms.
	RTTMinMs    float64 `json:"rtt_min_ms"`
	RTTMedianMs float64 `json:"rtt_median_ms"`
	RTTMaxMs    float64 `json:"rtt_max_ms"`
	// DownBps and UpBps are the measured bulk goodput per direction in bit/s (0 = not measured).
	DownBps float64 `json:"down_bps"`
	UpBps   float64 `json:"up_bps"`
	// HostPlainRTTMs is the median idle RTT in ms over a veth pair with no qdisc between the
	// same namespaces (the machine's network stack), and HostOverheadMs the median extra RTT of
	// that pair with the link's one-way delay as a netem delay each way (stack plus two qdisc
	// timer expiries), measured
	// in pairs with the idle probes and added to the expected RTTs of later lines; both 0 when not
	// measured (the emulator's own timing is checked instead).
	HostPlainRTTMs float64 `json:"host_plain_rtt_ms,omitempty"`
	HostOverheadMs float64 `json:"host_overhead_ms,omitempty"`
	// HostTailMs is how far that pair's judged largest RTT (the second largest of 10 or more)
	// lay above its median (the host's own stalls; informational: the idle RTT's max is judged
	// by the paired differences); 0 when not measured.
	HostTailMs float64 `json:"host_tail_ms,omitempty"`
	// Pairs is the number of answered idle probe pairs of a tc-shaped link: one probe over the
	// link and one over the reference pair sent together. RefRTTMedianMs is the reference
	// probes' median RTT in ms; PairedDiffMedianMs the median of the pairs' differences (link
	// minus reference, ms), PairedDiffLoMs..PairedDiffHiMs its distribution-free interval (sign
	// test) of coverage PairedCoverage (0..1), PairedDiffMaxMs the largest difference. All
	// absent for the userspace emulator.
	Pairs              int     `json:"pairs,omitempty"`
	RefRTTMedianMs     float64 `json:"ref_rtt_median_ms,omitempty"`
	PairedDiffMedianMs float64 `json:"paired_diff_median_ms,omitempty"`
	PairedDiffLoMs     float64 `json:"paired_diff_lo_ms,omitempty"`
	PairedDiffHiMs     float64 `json:"paired_diff_hi_ms,omitempty"`
	PairedDiffMaxMs    float64 `json:"paired_diff_max_ms,omitempty"`
	PairedCoverage     float64 `json:"paired_coverage,omitempty"`
	// HostBusyPct is the share of the machine's CPU time, all its CPUs together, that was busy
	// during the check (this process's probes and forwarders included), and HostStealPct the
	// share the hypervisor took from the machine's virtual CPUs (proc(5), /proc/stat "steal"),
	// in percent; absent when 0 or where /proc/stat cannot be read. They are the machine's
	// context for a failed check, not judged: a check that fails while the hypervisor steals
	// time says so.
	HostBusyPct  float64 `json:"host_busy_pct,omitempty"`
	HostStealPct float64 `json:"host_steal_pct,omitempty"`
	// IdlePollCPUs is the number of CPUs an idle-priority spinner kept awake during the check
	// (Env.IdlePollCPUs).
	IdlePollCPUs int `json:"idle_poll_cpus,omitempty"`
	// ShieldCPU is the CPU kept for the emulator's forwarders and the probes during the check
	// (Env.ShieldCPU); absent when none was.
	ShieldCPU *int `json:"shield_cpu,omitempty"`
	// Qdisc is the kernel's qdisc tree of a tc-shaped link ("tc qdisc show" of each end, one line
	// per qdisc prefixed with the end); absent for the userspace emulator.
	Qdisc []string `json:"qdisc,omitempty"`
	// Lines is the human-readable configured-vs-measured table, one entry per check.
	Lines []CheckLine `json:"lines,omitempty"`
	// Attempt numbers the self-checks of one link in one run from 1: 2 is the repeat of a failed
	// check (0 in records written before it was recorded). See RecheckedLinks.
	Attempt int `json:"attempt,omitempty"`
	// DurationMs is how long the check took, in ms, from its first probe to its verdict (0 in
	// records written before it was recorded). A link_check line's time is when the check
	// ended, so its start is time minus DurationMs (plan.Took counts a run from there).
	DurationMs float64 `json:"duration_ms,omitempty"`
	// SettledMs is how long the repeat of a failed check waited, before it started, for the
	// machine to be quiet (selfcheck.Settle: the machine's busy and stolen shares under their
	// bounds for one window, or the wait's cap), in ms; absent on first checks and in older records. The
	// check's bounds are the same either way.
	SettledMs float64 `json:"settled_ms,omitempty"`
	// SettledBusyPct is the machine's busy share over the last window of that wait, in percent.
	SettledBusyPct float64 `json:"settled_busy_pct,omitempty"`
	// SettledStealPct is the share of that window the hypervisor took, in percent.
	SettledStealPct float64 `json:"settled_steal_pct,omitempty"`
	// HostStalls is the check's host-stall finding (its "host stalls" line), absent in records
	// written before it was made.
	HostStalls *HostStalls `json:"host_stalls,omitempty"`
}

// HostStalls is what a link check saw of the host stopping the emulator: stall events (a run
// of releases later than LatenessBoundMs, Direction.Stalls) over the check, and the share of
// planned loads such stalls would make late. The link check fails on it only when that share is
// too high for a plan to finish (HostStallsLateShareMax), never for one stall: each load is
// judged on its own lateness anyway, and a late one is made again.
type HostStalls struct {
	// Stalls counts the stall events in both directions, Releases the packets released in them
	// and ReleasesTotal every packet released during the check.
	Stalls        int64 `json:"stalls"`
	Releases      int64 `json:"releases"`
	ReleasesTotal int64 `json:"releases_total"`
	// LongestMs is the largest lateness of any release, in ms (TimingErrMaxMs), and
	// LongestOwnMs the largest once host freezes are taken off (Direction.OwnLateMs): the
	// figure the lateness line judged until 2026-12-06 (at most LatenessBoundMs), kept so the
	// two rules can be compared on one check.
	LongestMs    float64 `json:"longest_ms"`
	LongestOwnMs float64 `json:"longest_own_ms"`
	// WindowS is the time the stalls were counted over, in seconds (the check's duration).
	WindowS float64 `json:"window_s"`
	// PerMinute is Stalls per minute of WindowS; PerMinuteLo its one-sided 95 % lower
	// confidence bound (Poisson: chi-square quantile 0.05 at 2 Stalls degrees of freedom,
	// halved; Garwood 1936).
	PerMinute   float64 `json:"per_minute"`
	PerMinuteLo float64 `json:"per_minute_lo"`
	// LoadSpanS is the duration of one planned load, in seconds, over which a stall makes it
	// late; LateShare is the expected share of such loads made late at the rate of the Own
	// stalls, 1 - exp(-rate x span) (stalls as a Poisson process), and LateShareLo the same at
	// that rate's one-sided 95 % lower bound, which the line judges.
	LoadSpanS   float64 `json:"load_span_s"`
	LateShare   float64 `json:"late_share"`
	LateShareLo float64 `json:"late_share_lo"`
	// ProbesLeftOut counts the RTT probes and stream packets whose flight overlapped a stall
	// and which the idle RTT, RTT-under-load, delay-variation, reordering and jitter lines
	// left out (stated on those lines).
	ProbesLeftOut int `json:"probes_left_out,omitempty"`
	// Own counts the stalls that would make a load late: those whose lateness, less what host
	// freezes explain as a load's is (StallSpan.OwnLateMs), still exceeds LatenessBoundMs;
	// stalls not listed count whole. LateShare and LateShareLo are judged on Own.
	Own int64 `json:"own"`
	// ReclaimPages is how many pages the guest kernel scanned for reclaim or compaction stalls
	// it counted during the check (/proc/vmstat: pgscan_kswapd, pgscan_direct, compact_stall,
	// allocstall_*). When it is not 0, a stopped CPU may have been the guest's own memory work
	// rather than the host's, so no freeze is trusted: Own counts every stall.
	ReclaimPages int64 `json:"reclaim_pages,omitempty"`
	// Watched is true when the idle-poll spinners and watchers ran during the check (independent
	// threads in other processes, one of each per CPU, that report when their CPU stopped:
	// Env.IdlePollCPUs); then SeenByHost counts the stalls (of those listed, the first 64 per
	// direction and step) during which one of them saw its CPU stop too, a stall of the machine
	// rather than of the emulator's process alone, and FloorMs is the longest stop they saw
	// in the check's window, in ms: the host's own floor beside LongestMs.
	Watched    bool    `json:"watched,omitempty"`
	SeenByHost int     `json:"seen_by_host,omitempty"`
	FloorMs    float64 `json:"floor_ms,omitempty"`
}

// HostStallsLateShareMax is the largest share of planned loads (0..1) that host stalls may be
// expected to make late before a link check refuses the host as too noisy to finish a plan:
// each late load is made once more, so at 20 % about 4 % of loads are late twice and lost.
const HostStallsLateShareMax = 0.20

// CheckLine is one configured-vs-measured line of a link check.
type CheckLine struct {
	// Name names the measured quantity, e.g. "idle RTT median".
	Name string `json:"name"`
	// Configured and Measured are the values with their units, e.g. "50 ms".
	Configured string `json:"configured"`
	Measured   string `json:"measured"`
	// Tolerance states the accepted range, e.g. "+-0.3 ms".
	Tolerance string `json:"tolerance"`
	// Pass is true when Measured is within Tolerance of Configured.
	Pass bool `json:"pass"`
	// AllowanceMs is the part of Tolerance, in ms, that the line took from the emulator's
	// recorded release lateness or a stall of the machine (never more than LatenessBoundMs),
	// when it took any: the line says how much of its pass it owes to lateness.
	AllowanceMs float64 `json:"allowance_ms,omitempty"`
}

// Settings are the settings an experiment asked for that change what a load measures; a report
// never pools loads made with different Settings.
type Settings struct {
	// TCPCC is the requested TCP congestion control of the server's TCP listeners ("cubic").
	TCPCC string `json:"tcp_cc,omitempty" role:"setting"`
	// TLS is the requested TLS version of the TCP listeners ("1.2" or "1.3"); QUIC is always 1.3.
	TLS string `json:"tls,omitempty" role:"setting"`
	// TimeoutMs is the per-load deadline in ms.
	TimeoutMs float64 `json:"timeout_ms,omitempty" role:"setting"`
	// Device is the emulated client device's spec ("motog2013:cgroup"; Record.Device has what
	// was applied and measured); "" for the desktop. Every line of the experiment carries it,
	// harness_error lines too, so that its loads are grouped apart from the desktop's.
	Device string `json:"device,omitempty" role:"setting"`
	// H3Stack and QUICCC are the requested HTTP/3 stack ("ngtcp2") and its congestion
	// controller ("bbr"); both "" for quic-go, the default (NewReno only). Record.CC has what
	// the server ran, read back.
	H3Stack string `json:"h3_stack,omitempty" role:"setting"`
	QUICCC  string `json:"quic_cc,omitempty" role:"setting"`
	// Overrides lists the command-line flags that replaced a matrix file's values, as
	// "runs=3 (matrix: 20)"; empty when nothing was overridden.
	Overrides []string `json:"overrides,omitempty" role:"line"`
}

// IsLoad reports whether r is a page-load record (not a link check or another kind).
func (r *Record) IsLoad() bool { return r.Kind == "" || r.Kind == KindLoad }

// Visual holds a load's visual metrics, computed from DevTools screencast frames as WebPageTest
// and browsertime do (visualmetrics.py): each frame's visual completeness is the share of the
// final frame's colour-histogram change (R, G and B, 256 bins each, white pixels left out) that
// it has matched, in whole percent. Times are ms from the navigation start.
type Visual struct {
	// SpeedIndexMs is the area above the visual completeness curve: the sum over frames of
	// (1 - completeness) x the time until the next frame, from 0 to VisuallyCompleteMs, in ms.
	SpeedIndexMs float64 `json:"speed_index_ms"`
	// FirstVisualChangeMs is the time of the first frame with completeness above 0.
	FirstVisualChangeMs float64 `json:"first_visual_change_ms"`
	// VisuallyCompleteMs is the time of the first frame with completeness 100.
	VisuallyCompleteMs float64 `json:"visually_complete_ms"`
	// LastVisualChangeMs is the time of the last frame that differs from the one before it.
	LastVisualChangeMs float64 `json:"last_visual_change_ms"`
	// Frames is the number of screencast frames received during the load.
	Frames int `json:"frames"`
	// Progress is visual completeness over time: one point per change, ascending.
	Progress []VisualPoint `json:"progress"`
	// Filmstrip holds small JPEG thumbnails of frames where completeness changed: at most
	// MaxFilmstrip, spread evenly over the load with the first and the last change kept.
	Filmstrip []Thumb `json:"filmstrip,omitempty"`
}

// VisualPoint is the visual completeness (0-100 %) reached at Ms.
type VisualPoint struct {
	Ms  float64 `json:"ms"`
	Pct int     `json:"pct"`
}

// Thumb is one filmstrip frame: its time in ms, completeness in % and a JPEG (base64 in JSON).
type Thumb struct {
	Ms   float64 `json:"ms"`
	Pct  int     `json:"pct"`
	JPEG []byte  `json:"jpeg"`
}

// MaxFilmstrip bounds Visual.Filmstrip (each thumbnail is 160 px wide, a few KB).
const MaxFilmstrip = 12

// Add adds the counters of o (a later, disjoint interval) to d: every count is summed, every
// maximum (ReorderExtentMax, QueueDelayMaxMs, TimingErrMaxMs) is the larger of the two, the
// derived ratios (LossBurstMean, ReorderRatio, ReorderExtentMean) are recomputed from the sums
// (ReorderExtentMean weighted by Reordered), and the medians and 99th percentiles, which a sum
// of intervals does not determine, are set to 0.
func (d *Direction) Add(o Direction) {
	extentSum := d.ReorderExtentMean*float64(d.Reordered) + o.ReorderExtentMean*float64(o.Reordered)
	d.PacketsIn += o.PacketsIn
	d.BytesIn += o.BytesIn
	d.PacketsOut += o.PacketsOut
	d.BytesOut += o.BytesOut
	d.DropsLoss += o.DropsLoss
	d.DropsQueue += o.DropsQueue
	d.DropsOther += o.DropsOther
	d.DropsAQM += o.DropsAQM
	d.DropsOutage += o.DropsOutage
	d.HeldOutage += o.HeldOutage
	d.LossBursts += o.LossBursts
	d.MarksCE += o.MarksCE
	d.Corrupted += o.Corrupted
	d.Bleached += o.Bleached
	d.Rebinds += o.Rebinds
	d.Unbound += o.Unbound
	d.Reordered += o.Reordered
	d.ReorderExtentMax = max(d.ReorderExtentMax, o.ReorderExtentMax)
	d.QueueDelayMaxMs = max(d.QueueDelayMaxMs, o.QueueDelayMaxMs)
	own := max(d.OwnLateMs(), o.OwnLateMs())
	d.TimingErrMaxMs = max(d.TimingErrMaxMs, o.TimingErrMaxMs)
	d.HostFreezeMs = max(d.HostFreezeMs, o.HostFreezeMs)
	d.HostFreezeReleases += o.HostFreezeReleases
	d.Stalls += o.Stalls
	d.StalledReleases += o.StalledReleases
	d.StallSpans = append(d.StallSpans, o.StallSpans...)
	if d.HostFreezeMs > 0 {
		d.TimingErrOwnMaxMs = own
	}
	d.QueueDelayP50Ms, d.QueueDelayP99Ms, d.TimingErrP50Ms, d.TimingErrP99Ms = 0, 0, 0, 0
	d.LossBurstMean, d.ReorderRatio, d.ReorderExtentMean = 0, 0, 0
	if d.LossBursts > 0 {
		d.LossBurstMean = float64(d.DropsLoss) / float64(d.LossBursts)
	}
	if d.PacketsOut > 0 {
		d.ReorderRatio = float64(d.Reordered) / float64(d.PacketsOut)
	}
	if d.Reordered > 0 {
		d.ReorderExtentMean = extentSum / float64(d.Reordered)
	}
}

// Add adds o's counters to e, direction by direction (Direction.Add), and takes o's Process
// when e has none (one link's counters: its forwarders run in one place).
func (e *Emulator) Add(o Emulator) {
	e.Down.Add(o.Down)
	e.Up.Add(o.Up)
	if e.Process == "" {
		e.Process = o.Process
	}
}

// ArtifactFailure is one evidence file that was not written whole.
type ArtifactFailure struct {
	// Path is the file, slash-separated and relative to the --artifacts directory (absolute
	// while the writer fills it in, before the artifacts package makes it relative).
	Path string `json:"path"`
	// Error says what went wrong, e.g. "write load.har: no space left on device".
	Error string `json:"error"`
}

// Device is an emulated client device as a record states it (package device): what was asked
// for, how it was applied and what the launch-time check measured.
type Device struct {
	// Name is the preset ("motog2013", "nexus6", "motog4") or "custom"; Spec the --device value
	// as read back ("motog2013:cgroup").
	Name string `json:"name" role:"setting"`
	Spec string `json:"spec" role:"setting"`
	// Slowdown is the device's CPU slowdown against the presets' reference desktop (Source).
	Slowdown float64 `json:"slowdown" role:"setting"`
	// Mechanism is the kernel interface of the budget ("cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us",
	// "cgroup v2 cpu.max"), "cdp Emulation.setCPUThrottlingRate", or both joined by " + ".
	Mechanism string `json:"mechanism" role:"setting"`
	// CPUs is the budget of the browser's whole process tree in cores (1/Slowdown), with the CFS
	// period and quota written, in µs; 0 without a budget.
	CPUs     float64 `json:"cpus,omitempty" role:"setting"`
	PeriodUs int     `json:"period_us,omitempty" role:"setting"`
	QuotaUs  int     `json:"quota_us,omitempty" role:"setting"`
	// CDPRate is the Emulation.setCPUThrottlingRate of every tab; 0 when not used.
	CDPRate float64 `json:"cdp_rate,omitempty" role:"setting"`
	// Mobile, Width, Height, DPR and UserAgent are the emulated screen and user agent; Width 0
	// when the browser's own.
	Mobile    bool    `json:"mobile,omitempty" role:"setting"`
	Width     int     `json:"width,omitempty" role:"setting"`
	Height    int     `json:"height,omitempty" role:"setting"`
	DPR       float64 `json:"dpr,omitempty" role:"setting"`
	UserAgent string  `json:"user_agent,omitempty" role:"setting"`
	// Source cites the slowdown.
	Source string `json:"source,omitempty" role:"setting"`
	// CalibrationDesktopMs and CalibrationDeviceMs are the fastest of five timings of a fixed
	// single-threaded script in a tab of this browser before and after the slowdown was applied
	// (ms), and
	// MeasuredSlowdown their ratio, which the launch-time check held within SlowdownTolerance of
	// ExpectedSlowdown.
	CalibrationDesktopMs float64 `json:"calibration_desktop_ms" role:"measure"`
	CalibrationDeviceMs  float64 `json:"calibration_device_ms" role:"measure"`
	// CalibrationDesktopCPUMs is the CPU time of the renderer's main thread over the fastest
	// desktop timing (ms, from /proc/PID/schedstat; 0 where the kernel keeps none). The
	// desktop speed is the script's work alone: when other work shared the CPU (the budget's
	// group is pinned to one CPU), its wall time exceeds this, and MeasuredSlowdown is
	// CalibrationDeviceMs over the smaller of the two, so a busy CPU is never taken for a
	// slowdown that did not hold, nor hides one (the device's wall time keeps the busy CPU's
	// share in it, as its loads do).
	CalibrationDesktopCPUMs float64 `json:"calibration_desktop_cpu_ms,omitempty" role:"measure"`
	MeasuredSlowdown        float64 `json:"measured_slowdown" role:"measure"`
	ExpectedSlowdown        float64 `json:"expected_slowdown" role:"setting"`
	SlowdownTolerance       float64 `json:"slowdown_tolerance" role:"setting"`
	// CalibrationAttempt is the check these figures are from: 1, or 2 when the first missed
	// the tolerance and was made once more (Attempts, the one retry rule: one disturbed
	// timing is not taken for a budget that does not hold).
	CalibrationAttempt int `json:"calibration_attempt,omitempty" role:"measure"`
	// NetworkServiceInBudget is true when the check found Chromium's network service process
	// (where QUIC runs) inside the budget's group; always false for CDP throttling alone.
	NetworkServiceInBudget bool `json:"network_service_in_budget" role:"measure"`
}

// CPU is the CPU time spent during one measured load, in ms: the browser's by process type
// (from /proc, to TickMs, 10 ms per process), the budget group's total (ns precision), and the
// harness's (pltlab's own process: server, emulator and runner together).
type CPU struct {
	BrowserMs  float64 `json:"browser_ms"`
	RendererMs float64 `json:"renderer_ms"`
	NetworkMs  float64 `json:"network_ms"`
	GPUMs      float64 `json:"gpu_ms"`
	OtherMs    float64 `json:"other_ms"`
	// TreeMs is the sum of the five above.
	TreeMs float64 `json:"tree_ms"`
	// GroupMs is the budget group's CPU time (cpuacct.usage or cpu.stat usage_usec), and
	// BudgetMs the most the budget allowed over the load's wall time; both 0 without a budget.
	GroupMs  float64 `json:"group_ms,omitempty"`
	BudgetMs float64 `json:"budget_ms,omitempty"`
	// ThrottledMs is the time the group was held back by its budget during the load.
	ThrottledMs float64 `json:"throttled_ms,omitempty"`
	// HarnessMs is pltlab's own CPU time (getrusage), in whose process the server runs.
	HarnessMs float64 `json:"harness_ms"`
	// Exited counts browser processes that ended during the load (their CPU time is lost).
	Exited int `json:"exited,omitempty"`
}
