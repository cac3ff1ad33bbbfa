package result

import "testing"

// TestClassify: one outcome per load, the network's failures apart from invalid loads.
func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want Outcome
		code string
	}{
		{"valid", Record{Valid: true}, OutcomeValid, ""},
		{"timeout", Record{TimedOut: true, InvalidReason: "timed out at the 5s deadline: object /img/0001.jpg: failed: net::ERR_CONNECTION_RESET"}, OutcomeTimedOut, "ERR_CONNECTION_RESET"},
		{"quic handshake", Record{InvalidReason: "navigation failed: net::ERR_QUIC_PROTOCOL_ERROR"}, OutcomeNetworkFailed, "ERR_QUIC_PROTOCOL_ERROR"},
		{"object reset", Record{InvalidReason: "object /img/0002.jpg: 100 of 30000 bytes (failed: net::ERR_HTTP2_PROTOCOL_ERROR)"}, OutcomeNetworkFailed, "ERR_HTTP2_PROTOCOL_ERROR"},
		{"refused is the harness's", Record{InvalidReason: "navigation failed: net::ERR_CONNECTION_REFUSED"}, OutcomeInvalid, ""},
		{"protocol mismatch wins", Record{InvalidReason: `object /img/0001.jpg: failed: net::ERR_CONNECTION_RESET; page /index.html: protocol "h2", requested h3`}, OutcomeInvalid, ""},
		{"crash", Record{InvalidReason: "browser crashed: context canceled"}, OutcomeInvalid, ""},
		// An older file (no recorded bound): judged by LatenessBoundMs, so its 58 ms stall is refused.
		{"emulator late, bound not recorded", Record{Valid: true, Emulator: &Emulator{Down: Direction{TimingErrMaxMs: 58.45}}}, OutcomeEmulatorLate, ""},
		{"emulator late wins over a timeout", Record{TimedOut: true, Emulator: &Emulator{Up: Direction{TimingErrMaxMs: 12}, LateBoundMs: 5}}, OutcomeEmulatorLate, ""},
		{"emulator at its bound", Record{Valid: true, Emulator: &Emulator{Down: Direction{TimingErrMaxMs: 5}, LateBoundMs: 5}}, OutcomeValid, ""},
		{"emulator within a recorded wider bound", Record{Valid: true, Emulator: &Emulator{Down: Direction{TimingErrMaxMs: 8}, LateBoundMs: 10}}, OutcomeValid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(&tt.r); got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
			if tt.want != OutcomeTimedOut {
				if got := NetworkError(&tt.r); got != tt.code {
					t.Errorf("NetworkError = %q, want %q", got, tt.code)
				}
			}
		})
	}
}
