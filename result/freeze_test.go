package result

import "testing"

// TestLateHostFreeze: the lateness bound judges what no host freeze explains (OwnLateMs), and
// Add keeps it across intervals: 8.1 ms of which 7.9 ms frozen is not late, 8.1 ms unexplained
// is, and a later interval's unexplained 6 ms makes the sum late again.
func TestLateHostFreeze(t *testing.T) {
	frozen := &Emulator{Down: Direction{TimingErrMaxMs: 8.1, HostFreezeMs: 7.9, HostFreezeReleases: 1, TimingErrOwnMaxMs: 0.2}}
	if frozen.Late() || frozen.LateMs() != 0.2 || frozen.RawLateMs() != 8.1 || frozen.HostFreezeMs() != 7.9 {
		t.Errorf("frozen: late %t, %.2f ms (raw %.2f)", frozen.Late(), frozen.LateMs(), frozen.RawLateMs())
	}
	if plain := (&Emulator{Up: Direction{TimingErrMaxMs: 8.1}}); !plain.Late() || plain.LateMs() != 8.1 {
		t.Errorf("unexplained 8.1 ms: late %t, %.2f ms", plain.Late(), plain.LateMs())
	}
	d := frozen.Down
	d.Add(Direction{TimingErrMaxMs: 6})
	if d.OwnLateMs() != 6 || d.TimingErrMaxMs != 8.1 || d.HostFreezeMs != 7.9 || d.HostFreezeReleases != 1 {
		t.Errorf("after Add: %+v", d)
	}
}
