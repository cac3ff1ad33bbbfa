// Package linkspec is the LINK grammar: it parses a link spec ("carlucci2015", "rate=10mbit,rtt=40ms,loss=1%") into the values of an emulated link.
//
// Parse reads a preset name (Presets), key=value items or both into a Spec: rates (Rate, bit/s)
// and sizes (ByteSize), the RTT, the droptail queue (1 BDP by default, BDP = rate x RTT, RFC
// 6349 section 2), jitter and reordering, and per direction the impairments (Impair: Bernoulli
// or Gilbert-Elliott loss, delay variation, reordering, AQM, a Mahimahi trace, GenerateTrace),
// outages and the shaper. PipeConfigs turns a Spec into the emulator's per-direction
// configuration (package shaping/emu), NetemSupported says what tc netem cannot reproduce, and
// Spec.Result gives the record's form. It opens nothing: the link runtime is package shaping,
// its self-check package shaping/selfcheck.
package linkspec
