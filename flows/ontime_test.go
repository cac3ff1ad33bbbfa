package flows

import (
	"context"
	"testing"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// runOnTime makes a run of c on l by the harness's one retry rule (result.Retry, as Execute
// does): a run the emulator was late in is not a measurement, so it is made once more, and one
// late on both attempts is lost to host stalls: logged, and nil returned, so that the caller
// judges nothing (docs/design.md, "Host stalls: judged on their own"; on a busy 2-core machine
// a 5-10 s flow run holds hundreds of the runtime's hand-offs, "What still stalls the emulator").
// A run the emulator was on time in is returned whole, for the caller to judge: a bound it
// misses then fails the test. A harness error fails the test.
func runOnTime(ctx context.Context, t *testing.T, l shaping.Link, srv *server.Server, c Config) []*result.Record {
	t.Helper()
	var recs []*result.Record
	_, err := result.Retry(func(attempt int) (bool, error) {
		var err error
		if recs, err = Run(ctx, l, srv, c); err != nil || len(recs) == 0 || !recs[0].Emulator.Late() {
			return false, err
		}
		why := recs[0].Emulator.LateReason("")
		if attempt == result.Attempts {
			t.Logf("run lost to host stalls (the emulator late on all %d attempts): %s", attempt, why)
			recs = nil
			return false, nil
		}
		t.Logf("run made once more, as Execute does: %s", why)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
