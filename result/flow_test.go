package result

import (
	"bytes"
	"strings"
	"testing"
)

// TestFlowLine writes a flow line and reads it back: the flow's fields sit at the top level of
// the JSON object (as the contract names them) and decode into Record.Flow; a page-load
// line decodes with a nil Flow.
func TestFlowLine(t *testing.T) {
	conv := 1.5
	in := &Record{Kind: KindFlow, Protocol: "h1", CC: "cubic", Valid: true, Flow: &Flow{
		FlowIndex: 1, Flows: 2, Mix: "h3:newreno+h1:cubic", GoodputBps: 1.4e6, Bytes: 5000,
		LossRatio: 0.01, LossSource: "emulator", Series: []float64{0, 8e5}, BinMs: 100,
		Utilization: 0.96, Jain: 0.99, ConvergeS: &conv}}
	var buf bytes.Buffer
	if err := NewWriter(&buf).Write(in); err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	for _, field := range []string{`"kind":"flow"`, `"protocol":"h1"`, `"cc":"cubic"`, `"goodput_bps":1400000`,
		`"bytes":5000`, `"loss_ratio":0.01`, `"series":[0,800000]`, `"utilization":0.96`, `"jain":0.99`, `"converge_s":1.5`} {
		if !strings.Contains(line, field) {
			t.Errorf("line lacks %s: %s", field, line)
		}
	}
	out, err := NewReader(strings.NewReader(line+`{"v":1,"plt_ms":5}`+"\n"), "t").Next()
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsFlow() || out.IsLoad() || out.FlowIndex != 1 || out.Mix != in.Mix || *out.ConvergeS != 1.5 || len(out.Series) != 2 {
		t.Fatalf("read back %+v / %+v", out, out.Flow)
	}
	rd := NewReader(strings.NewReader(`{"v":1,"plt_ms":5,"cross":"h1:cubic"}`), "t")
	load, err := rd.Next()
	if err != nil || load.Flow != nil || load.IsFlow() || !load.IsLoad() || load.Cross != "h1:cubic" {
		t.Fatalf("page load read as %+v, %v", load, err)
	}
}
