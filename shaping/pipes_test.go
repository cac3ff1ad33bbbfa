package shaping

import (
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

func TestDirectionCounters(t *testing.T) {
	d := direction(emu.Counters{PacketsOut: 100, DropsLoss: 12, LossBursts: 4, Reordered: 5, ReorderExtentSum: 15,
		ReorderExtentMax: 7, MarksCE: 3, DropsAQM: 2, DropsOutage: 9, HeldOutage: 1, QueueDelayP50: 2 * time.Millisecond})
	if d.LossBurstMean != 3 || d.ReorderRatio != 0.05 || d.ReorderExtentMean != 3 || d.ReorderExtentMax != 7 || d.MarksCE != 3 ||
		d.DropsAQM != 2 || d.DropsOutage != 9 || d.HeldOutage != 1 || d.QueueDelayP50Ms != 2 {
		t.Fatalf("direction = %+v", d)
	}
}
