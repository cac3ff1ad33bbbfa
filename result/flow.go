package result

// KindFlow marks a line holding one bulk flow of a flows run (Flow); see Record.Flow.
const KindFlow Kind = "flow"

// Flow is one bulk flow of one run of `pltlab flows` (package flows): its own measurements and,
// repeated on every flow of the run, the run's link-level ones. On a KindFlow line its fields
// sit at the top level of the record, beside Record.Protocol (the flow's protocol, verified),
// Record.CC (the flow's congestion control as the server reports it for the connection:
// TCP_CONGESTION read back from the socket, or "newreno" for h3, quic-go having no other),
// Record.Valid/InvalidReason (the protocol check), Record.Link, Record.Run, Record.Time
// (the run's start) and Record.Emulator (the whole run's link counters: packets, bytes and drops
// summed, queueing delay and timing error as maxima; their p50/p99 are 0, unknown for a run). Rates are bit/s of application bytes (HTTP body bytes the client read)
// unless named "ip"; times are seconds from the run's start; series have one value per bin of
// BinMs milliseconds from the run's start.
type Flow struct {
	// FlowIndex numbers the flows of a run from 0, in the order given on the command line.
	FlowIndex int `json:"flow" role:"setting"`
	// Flows is the number of flows in the run.
	Flows int `json:"flows" role:"setting"`
	// Mix names the run's flow mix, its flows as PROTO:CC joined by "+" ("h3:newreno+h1:cubic").
	Mix string `json:"mix" role:"setting"`
	// ALPN is the ALPN protocol the client negotiated; QUICVersion the QUIC version ("v1"), h3 only.
	ALPN        string `json:"alpn" role:"measure"`
	QUICVersion string `json:"quic_version,omitempty" role:"measure"`
	// Starved marks a flow that connected but whose client read no byte of the body: its
	// protocol was never observed carrying data, so the record is not valid, and reports count
	// starved flows apart from other invalid ones (a starved flow is a fairness fact of the mix,
	// not a harness fault).
	Starved bool `json:"starved,omitempty" role:"measure"`
	// StartS is when the flow started, and DurationS how long it ran, in seconds.
	StartS    float64 `json:"start_s" role:"setting"`
	DurationS float64 `json:"duration_s" role:"setting"`
	// GoodputBps is the flow's mean goodput over its steady state, bit/s: the body bytes read
	// after a clean read near SteadyFromS up to a clean read near SteadyToS, over the time
	// between those two reads [GoodputFromS, GoodputToS] (flows.ReadEdges: a read is clean
	// when no receive hole held bytes back at it, so that a hole at an edge biases it neither
	// way).
	GoodputBps float64 `json:"goodput_bps" role:"measure"`
	// GoodputFromS and GoodputToS are the two reads GoodputBps is measured between, in seconds
	// since the run's start; each lies at or up to a quarter of the steady state before its
	// edge of it (the steady state's own edges when the records predate them or no read came
	// before an edge).
	GoodputFromS float64 `json:"goodput_from_s,omitempty" role:"measure"`
	GoodputToS   float64 `json:"goodput_to_s,omitempty" role:"measure"`
	// GoodputHeldBytes is what the two edge reads are known to have held back (bytes that had
	// arrived behind a receive hole, seen as later reads ahead of the link's rate) when no clean
	// read lay near an edge; it biases GoodputBps by at most GoodputHeldBytes*8 over the
	// window. 0 when both edges are clean, or on an unlimited link (not judged).
	GoodputHeldBytes int64 `json:"goodput_held_bytes,omitempty" role:"measure"`
	// MeanGoodputBps is Bytes*8 over the whole flow (slow start included), bit/s.
	MeanGoodputBps float64 `json:"mean_goodput_bps" role:"measure"`
	// SteadyFromS and SteadyToS bound the flow's steady state: from its start plus
	// max(2 s, 10 base RTTs) (at most half the flow) to its end, in seconds, on bin boundaries.
	SteadyFromS float64 `json:"steady_from_s" role:"measure"`
	SteadyToS   float64 `json:"steady_to_s" role:"measure"`
	// Bytes is the application (HTTP body) bytes the client received.
	Bytes int64 `json:"bytes" role:"measure"`
	// LossRatio is the share of the flow's down-direction packets the link dropped
	// (Drops/Packets) when LossSource is "emulator"; with "sender" it is the server's
	// retransmitted (TCP) or lost-declared (QUIC) packets over packets sent.
	LossRatio  float64 `json:"loss_ratio" role:"measure"`
	LossSource string  `json:"loss_source" role:"measure"`
	// Packets and Drops are the flow's down-direction IP packets offered to the emulated link
	// and dropped by it (loss or full queue), attributed by 5-tuple; 0 when not counted.
	Packets int64 `json:"packets" role:"measure"`
	Drops   int64 `json:"drops" role:"measure"`
	// Retransmits is the server's count of retransmitted TCP segments (tcpi_total_retrans) or
	// of QUIC packets declared lost; SegmentsOut the segments/packets it sent. For the ngtcp2
	// stack both come from the connection's qlog (recovery:packet_lost, transport:packet_sent).
	Retransmits int64 `json:"retransmits" role:"measure"`
	SegmentsOut int64 `json:"segments_out" role:"measure"`
	// SRTTMs is the server's smoothed RTT of the connection at the flow's end, in ms.
	SRTTMs float64 `json:"srtt_ms" role:"measure"`
	// CountersCPUS is the CPU time, in seconds, this process spent after the flow reading the
	// sender's counters from an ngtcp2 qlog (about 315 MB of JSON per GB sent), so that a CPU
	// budget of the transfer can leave it out; 0 for quic-go and TCP, whose counters are read
	// from the connection.
	CountersCPUS float64 `json:"counters_cpu_s,omitempty" role:"measure"`
	// SenderBusyS is how long the server's TCP sender had data to send (tcpi_busy_time), and
	// RwndLimitedS and SndbufLimitedS the parts limited by the client's receive window and by
	// the server's send buffer, in seconds; a flow whose busy time falls short of its duration
	// was application-limited (the server did not write fast enough). 0 for h3.
	SenderBusyS    float64 `json:"sender_busy_s,omitempty" role:"measure"`
	RwndLimitedS   float64 `json:"rwnd_limited_s,omitempty" role:"measure"`
	SndbufLimitedS float64 `json:"sndbuf_limited_s,omitempty" role:"measure"`
	// BinMs is the width of every series' bins in ms (100 by default).
	BinMs float64 `json:"bin_ms" role:"setting"`
	// Series is the flow's goodput per bin in bit/s (application bytes received in the bin x 8
	// / bin width), from the run's start to its end; 0 before the flow starts and after it ends.
	Series []float64 `json:"series" role:"measure"`

	// Utilization is the run's sum of goodputs over the bottleneck's down rate, over the run's
	// steady window [RunFromS, RunToS] (first steady start to last end); 0 for an unshaped link.
	Utilization float64 `json:"utilization" role:"measure"`
	// IPUtilization is the IP bytes the emulated link delivered down (all flows, headers
	// included) over the same window, as a fraction of the down rate; 0 when unknown.
	IPUtilization float64 `json:"ip_utilization" role:"measure"`
	// RunFromS and RunToS bound the window of Utilization and IPUtilization, in seconds.
	RunFromS float64 `json:"run_from_s" role:"measure"`
	RunToS   float64 `json:"run_to_s" role:"measure"`
	// Jain is Jain's fairness index (sum x)^2 / (n sum x^2) of the flows' mean goodputs over
	// [JainFromS, JainToS], the span where every flow is in its steady state (Jain, Chiu & Hawe,
	// DEC-TR-301, 1984); 1 for one flow. Without a common steady span it uses each flow's
	// GoodputBps, and JainFromS = JainToS = 0.
	Jain      float64 `json:"jain" role:"measure"`
	JainFromS float64 `json:"jain_from_s" role:"measure"`
	JainToS   float64 `json:"jain_to_s" role:"measure"`
	// ConvergeS is the time from the last flow's start until Jain's index of the active flows'
	// 1 s moving-average goodputs reaches 0.9 and stays there for 2 s, in seconds; -1 when it
	// never does; absent with one flow.
	ConvergeS *float64 `json:"converge_s,omitempty" role:"measure"`
	// QueueDelayMs is the median queueing delay (ms) of the packets that entered the link's down
	// queue in each bin, QueueDelayMaxMs their maximum (0 in a bin without packets), and LinkBps
	// the IP bits the link delivered down per bin over the bin width; all absent when unshaped.
	QueueDelayMs    []float64 `json:"queue_delay_ms,omitempty" role:"measure"`
	QueueDelayMaxMs []float64 `json:"queue_delay_max_ms,omitempty" role:"measure"`
	LinkBps         []float64 `json:"link_bps,omitempty" role:"measure"`

	// Stack holds the host-stack settings of a high-rate bulk run (the highway2023 study):
	// absent on ordinary flow lines.
	Stack *FlowStack `json:"stack,omitempty" role:"mixed"`
}

// FlowStack is what a high-rate bulk run varied in the hosts' stacks and what it cost.
type FlowStack struct {
	// Path is "veth" (the kernel's veth pair, no emulator) or the emulated LINK spec.
	Path string `json:"path" role:"setting"`
	// Arm names the setting, e.g. "quic", "quic-os-buffers", "quic-no-gso", "tcp-cubic-no-offload".
	Arm string `json:"arm" role:"setting"`
	// QUICGSO is false when quic-go's GSO was off (QUIC_GO_DISABLE_GSO=true in the process).
	QUICGSO bool `json:"quic_gso" role:"setting"`
	// Offloads is false when TSO, GSO and GRO were off on both veth ends (ethtool -K).
	Offloads bool `json:"offloads" role:"setting"`
	// UDPBuffers is "raised" (what quic-go obtained: it asks for 7 MiB) or "os-default"
	// (net.core.rmem_default and wmem_default, set back on every UDP socket of the link).
	UDPBuffers string `json:"udp_buffers,omitempty" role:"setting"`
	// UDPRecvBuf and UDPSendBuf are the largest SO_RCVBUF and SO_SNDBUF read back from the
	// run's UDP sockets, in bytes (0 for TCP).
	UDPRecvBuf int `json:"udp_recv_buf,omitempty" role:"setting"`
	UDPSendBuf int `json:"udp_send_buf,omitempty" role:"setting"`
	// QUICWarning is the buffer warning quic-go logged in this run, if any (it warns once per
	// process, when it cannot raise a buffer to what it wants).
	QUICWarning string `json:"quic_warning,omitempty" role:"measure"`
	// CPUSeconds is the process's CPU time (user + system, both endpoints, the emulator's
	// threads excluded, or in its own process: Emulator.Process) during the run, and
	// EmulatorCPUSeconds the emulator's forwarders'; CPUSPerGB is
	// CPUSeconds per 10^9 bytes received.
	CPUSeconds         float64 `json:"cpu_s" role:"measure"`
	EmulatorCPUSeconds float64 `json:"emulator_cpu_s,omitempty" role:"measure"`
	CPUSPerGB          float64 `json:"cpu_s_per_gb" role:"measure"`
}

// IsFlow reports whether r is a flow line (KindFlow with its Flow fields).
func (r *Record) IsFlow() bool { return r.Kind == KindFlow && r.Flow != nil }
