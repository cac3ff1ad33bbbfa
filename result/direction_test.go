package result

import (
	"reflect"
	"strings"
	"testing"
)

// TestDirectionAddCoversEveryCounter fails when a counter field of Direction is added without
// being summed (or, for a maximum, kept) by Add: every int64 field is set to 1 in both operands
// and must come out 2 (a sum) or 1 (a maximum, named ...Max).
func TestDirectionAddCoversEveryCounter(t *testing.T) {
	var a, b Direction
	for _, d := range []*Direction{&a, &b} {
		v := reflect.ValueOf(d).Elem()
		for i := range v.NumField() {
			if v.Field(i).Kind() == reflect.Int64 {
				v.Field(i).SetInt(1)
			}
		}
	}
	a.Add(b)
	v := reflect.ValueOf(a)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Type.Kind() != reflect.Int64 {
			continue
		}
		want := int64(2)
		if strings.HasSuffix(f.Name, "Max") {
			want = 1
		}
		if got := v.Field(i).Int(); got != want {
			t.Errorf("%s after Add = %d, want %d", f.Name, got, want)
		}
	}
}

func TestDirectionAddDerived(t *testing.T) {
	a := Direction{PacketsOut: 100, DropsLoss: 4, LossBursts: 2, Reordered: 2, ReorderExtentMean: 1,
		ReorderExtentMax: 1, QueueDelayMaxMs: 5, QueueDelayP50Ms: 3}
	b := Direction{PacketsOut: 100, DropsLoss: 2, LossBursts: 2, Reordered: 2, ReorderExtentMean: 3,
		ReorderExtentMax: 4, QueueDelayMaxMs: 2, DropsAQM: 7, MarksCE: 3, HeldOutage: 5, DropsOutage: 6}
	a.Add(b)
	if a.LossBurstMean != 1.5 || a.ReorderRatio != 0.02 || a.ReorderExtentMean != 2 {
		t.Errorf("derived: burst mean %v ratio %v extent mean %v, want 1.5 0.02 2", a.LossBurstMean, a.ReorderRatio, a.ReorderExtentMean)
	}
	if a.ReorderExtentMax != 4 || a.QueueDelayMaxMs != 5 || a.QueueDelayP50Ms != 0 {
		t.Errorf("maxima %d %v, p50 %v: want 4 5 and 0", a.ReorderExtentMax, a.QueueDelayMaxMs, a.QueueDelayP50Ms)
	}
	if a.DropsAQM != 7 || a.MarksCE != 3 || a.HeldOutage != 5 || a.DropsOutage != 6 {
		t.Errorf("counts %+v", a)
	}
}
