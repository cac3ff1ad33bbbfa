package analysis

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestReportCountsFailedArtifacts checks that the report's counts line says how many evidence
// files were not written whole, counting a file the flows of one run share once.
func TestReportCountsFailedArtifacts(t *testing.T) {
	fail := []result.ArtifactFailure{{Path: "e/run-0000/link.pcapng", Error: "no space left on device"}}
	recs := []*result.Record{
		{Kind: result.KindLoad, Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 100, ArtifactsFailed: fail},
		{Kind: result.KindLoad, Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 110, ArtifactsFailed: fail},
		{Kind: result.KindLoad, Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 120,
			ArtifactsFailed: []result.ArtifactFailure{{Path: "e/run-0002/load.har", Error: "empty file"}}},
	}
	r := Analyze(recs, Options{})
	if line := r.countsLine(); !strings.Contains(line, "2 artifacts not written whole") {
		t.Fatalf("counts line %q does not count the 2 failed artifacts", line)
	}
}
