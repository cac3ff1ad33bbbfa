package layers

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/pltlab/pltlab/"

// allowed lists, for every package of ours, the packages of ours it may import (docs/design.md,
// "Packages"): cmd -> cluster -> studies -> experiment -> {browser, flows, server, shaping, pages}
// -> {result, protocol}; analysis -> {result, protocol} only; shaping/emu and the two leaves,
// result and protocol, import nothing of ours; within shaping, the LINK grammar (shaping/linkspec)
// imports only shaping/emu and result, the capture (shaping/capture) only shaping/pcapng, the
// link runtime (shaping) those two and its backends, and the self-check (shaping/selfcheck) sits
// above the runtime; plan (the seeded schedule, the cost model, shard names, the cut, recorded
// membership, completeness, the merge of shard files) imports only the leaves that describe a
// load (result, protocol, pages, device, shaping/linkspec) and sits below flows, experiment,
// studies, cluster, analysis, view and cmd;
// device (slow client devices: presets, the cgroup budget, CPU by process) is a leaf that
// browser, experiment and cmd/pltlab use; internal/fileout (create-write-close) is a leaf
// that analysis, studies and cmd/pltlab use; internal/cpushield (--shield-cpu: a CPU kept for
// pltlab's process) sits on internal/fileout and below cmd/pltlab, experiment, flows, shaping
// and the self-check; internal/gcpause (the collector paused during a measurement) is a
// standard-library-only leaf that experiment, flows and the self-check use; internal/quantity (the one conversion and text
// format of each quantity: ms, ratios, percentages, p-values, estimates) is a
// standard-library-only leaf that every package printing one uses, the self-check as well as
// the report; interop (the raw QUIC probe client and its cases, issue 52) is a standard-library-only leaf that cmd/pltlab drives against the server
// package's stacks (its tests start those servers); interop/matrix runs the exchange cases'
// clients, Chromium among them through browser's launch; view (the results dashboard) reads results
// through analysis and result only and imports nothing that measures. A package missing here
// fails the test, so a new
// package must be placed in the layering on purpose.
var allowed = map[string][]string{
	"result":                           nil,
	"plan":                             {"device", "pages", "protocol", "result", "shaping/linkspec"},
	"internal/hostenv":                 {"result"},
	"protocol":                         nil,
	"shaping/emu":                      nil,
	"shaping/netem":                    nil,
	"shaping/pcapng":                   nil,
	"shaping/linkspec":                 {"result", "shaping/emu", "internal/quantity"},
	"shaping/capture":                  {"shaping/pcapng"},
	"shaping/internal/linktest":        nil,
	"shaping/internal/rtwait":          nil,
	"artifacts":                        {"server", "shaping", "shaping/capture", "result", "protocol"},
	"internal/layers":                  nil,
	"internal/vmtest":                  nil,
	"internal/vmtest/vmrun":            {"internal/vmtest"},
	"internal/testenv":                 {"result"},
	"internal/fileout":                 nil,
	"internal/cpushield":               {"internal/fileout"},
	"internal/gcpause":                 nil,
	"internal/quantity":                nil,
	"interop/quicgo":                   nil,
	"interop/matrix":                   {"interop", "interop/quicgo", "browser", "server", "shaping", "shaping/capture", "shaping/linkspec", "pages", "result", "protocol", "internal/hostload"},
	"scripts/memchurn":                 nil,
	"scripts/handoff":                  nil,
	"internal/hostload":                {"internal/idlepoll"},
	"internal/idlepoll":                nil,
	"pages":                            {"result", "protocol"},
	"analysis":                         {"plan", "result", "protocol", "analysis/internal/synth", "internal/fileout", "internal/quantity"},
	"analysis/internal/synth":          {"result", "protocol"},
	"analysis/internal/synth/gensynth": {"analysis/internal/synth", "result"},
	"device":                           nil,
	"interop":                          nil,
	"browser":                          {"device", "internal/hostload", "internal/idlepoll", "pages", "result", "protocol", "internal/quantity"},
	"server":                           {"pages", "result", "protocol"},
	"shaping":                          {"internal/cpushield", "result", "protocol", "shaping/linkspec", "shaping/capture", "shaping/emu", "shaping/netem", "shaping/internal/rtwait", "internal/idlepoll", "internal/quantity"},
	"shaping/selfcheck":                {"internal/cpushield", "internal/gcpause", "result", "shaping", "shaping/linkspec", "shaping/emu", "shaping/internal/rtwait", "internal/hostload", "internal/idlepoll", "internal/quantity"},
	"flows":                            {"internal/cpushield", "internal/gcpause", "internal/hostenv", "internal/hostload", "plan", "internal/idlepoll", "artifacts", "server", "shaping", "shaping/linkspec", "shaping/selfcheck", "shaping/capture", "shaping/emu", "pages", "result", "protocol", "internal/quantity"},
	"experiment":                       {"internal/cpushield", "internal/gcpause", "device", "internal/hostenv", "plan", "internal/idlepoll", "internal/hostload", "artifacts", "browser", "flows", "server", "shaping", "shaping/linkspec", "shaping/selfcheck", "pages", "result", "protocol", "internal/quantity"},
	"studies":                          {"interop", "interop/matrix", "internal/hostenv", "internal/hostload", "internal/idlepoll", "plan", "artifacts", "experiment", "analysis", "flows", "shaping", "shaping/linkspec", "pages", "result", "protocol", "internal/fileout", "internal/quantity"},
	"cluster":                          {"plan", "studies", "experiment", "result", "protocol"},
	"view":                             {"plan", "analysis", "result", "protocol", "internal/quantity"},
	"view/studyview":                   {"view", "studies", "analysis", "result"},
	"cmd/pltlab":                       {"internal/cpushield", "device", "interop", "interop/matrix", "plan", "internal/idlepoll", "view", "view/studyview", "artifacts", "studies", "cluster", "experiment", "analysis", "browser", "flows", "server", "shaping", "shaping/linkspec", "shaping/selfcheck", "pages", "result", "protocol", "internal/fileout", "internal/quantity"},
}

// fenced lists third-party import paths (prefixes) and the only packages of ours that may
// import them (docs/design.md: each dependency is fenced in the one package that needs it).
// cmd/pltlab imports gin only to set its process-wide mode, which a library must not do.
var fenced = map[string][]string{
	"github.com/chromedp/":           {"browser"},
	"github.com/quic-go/":            {"server", "flows"},
	"golang.org/x/net/http2":         {"server", "flows"},
	"github.com/gin-gonic/gin":       {"server", "view", "cmd/pltlab"},
	"k8s.io/":                        {"cluster"},
	"github.com/vishvananda/":        {"shaping"},
	"gonum.org/v1/":                  {"analysis"},
	"github.com/spf13/cobra":         {"cmd/pltlab"},
	"github.com/schollz/progressbar": {"cmd/pltlab"},
}

// stdlibOnly are the packages of ours that import nothing outside the standard library: the
// record types and the plan, which any reader of results may take without the measuring stack,
// internal/quantity, which every layer formats with, and interop, whose QUIC packets are written
// from the RFCs, not borrowed from a stack it judges (interop/quicgo builds those stacks from the module proxy, as separate programs).
var stdlibOnly = map[string]bool{"result": true, "internal/quantity": true, "plan": true, "interop": true, "interop/quicgo": true}

func TestPackageLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		may, known := allowed[pkg]
		if !known {
			t.Errorf("package %s is not placed in the layering (add it to allowed and to docs/design.md)", pkg)
			continue
		}
		n++
		for _, imp := range fields[1:] {
			if ours, ok := strings.CutPrefix(imp, module); ok {
				if !slices.Contains(may, ours) {
					t.Errorf("%s imports %s: not allowed by docs/design.md (may import %v)", pkg, ours, may)
				}
				continue
			}
			if stdlibOnly[pkg] && strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
				t.Errorf("%s imports %s: it is the standard library only (docs/design.md)", pkg, imp)
			}
			for prefix, owners := range fenced {
				if strings.HasPrefix(imp, prefix) && !slices.Contains(owners, pkg) {
					t.Errorf("%s imports %s, which only %v may import", pkg, imp, owners)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d packages listed; go list output:\n%s", n, out)
	}
}
