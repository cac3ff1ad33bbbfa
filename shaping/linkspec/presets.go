package linkspec

import (
	"strings"
)

// Preset is a named LINK spec.
type Preset struct {
	// Name is what Parse accepts, e.g. "carlucci2015".
	Name string
	// Spec is the key=value form the name stands for ("" for "none": no shaping).
	Spec string
	// Doc says where the numbers come from.
	Doc string
}

// wpt is the source of the WebPageTest-style presets: the connectivity profiles shipped with
// WebPageTest (www/settings/connectivity.ini.sample, WPO-Foundation/webpagetest). WebPageTest gives
// a "latency" that is the added round-trip time; it sets no queue, so ours default to 1 BDP.
const wpt = "WebPageTest connectivity profile "

var presets = []Preset{
	{"carlucci2015", "rate=3mbit,rtt=50ms,queue=1bdp", "Carlucci et al., ACM SAC 2015: 3 Mbit/s bottleneck both ways, 50 ms base RTT, buffer = 1 BDP (18750 B), no loss"},
	{"none", "", "no shaping: client and server talk over loopback, no namespace"},
	{"cable", "down=5mbit,up=1mbit,rtt=28ms", wpt + "Cable: 5 Mbit/s down, 1 Mbit/s up, 28 ms RTT"},
	{"dsl", "down=1.5mbit,up=384kbit,rtt=50ms", wpt + "DSL: 1.5 Mbit/s down, 384 kbit/s up, 50 ms RTT"},
	{"fios", "down=20mbit,up=5mbit,rtt=4ms", wpt + "FIOS: 20 Mbit/s down, 5 Mbit/s up, 4 ms RTT"},
	{"dial", "down=49kbit,up=30kbit,rtt=120ms", wpt + "Dial: 49 kbit/s down, 30 kbit/s up, 120 ms RTT"},
	{"edge", "down=240kbit,up=200kbit,rtt=840ms", wpt + "Mobile Edge: 240 kbit/s down, 200 kbit/s up, 840 ms RTT"},
	{"2g", "down=280kbit,up=256kbit,rtt=800ms", wpt + "2G: 280 kbit/s down, 256 kbit/s up, 800 ms RTT"},
	{"3gslow", "down=400kbit,up=400kbit,rtt=400ms", wpt + "3G Slow: 400 kbit/s both ways, 400 ms RTT"},
	{"3g", "down=1.6mbit,up=768kbit,rtt=300ms", wpt + "3G: 1.6 Mbit/s down, 768 kbit/s up, 300 ms RTT"},
	{"3gfast", "down=1.6mbit,up=768kbit,rtt=150ms", wpt + "3G Fast: 1.6 Mbit/s down, 768 kbit/s up, 150 ms RTT"},
	{"4g", "rate=9mbit,rtt=170ms", wpt + "4G: 9 Mbit/s both ways, 170 ms RTT"},
	{"lte", "rate=12mbit,rtt=70ms", wpt + "LTE: 12 Mbit/s both ways, 70 ms RTT"},
	{"muthuraj2024-112j50", "rate=10mbit,rtt=112ms,delayvar=50ms", "Muthuraj (2024) condition 112J50: 112 ms RTT +- 50 ms, each one-way delay redrawn uniformly every 100 ms as in Kakhki et al.'s scripts (later packets overtake earlier ones); 10 Mbit/s is pltlab issue 12's example rate, not taken from the paper"},
	{"kakhki2017-jitter", "rate=10mbit,rtt=112ms,delayvar=10ms", "Kakhki et al., IMC 2017, delay variation that reorders packets (QUIC's loss detection mistakes them for losses): one-way delay redrawn +-10 ms every 100 ms; rate and RTT chosen to match muthuraj2024-112j50"},
	{"kakhki2017-loss", "rate=10mbit,rtt=112ms,loss=1%", "Kakhki et al., IMC 2017, random loss: 1 % Bernoulli per direction at 10 Mbit/s; RTT as in the jitter presets"},
	{"bursty-loss", "rate=3mbit,rtt=50ms,loss=2%,burst=4", "bursty loss example (pltlab issue 12): Gilbert model per direction with 2 % mean loss in bursts of 4 packets on average (netem gemodel p=0.51%, r=25%, 1-h=100%, 1-k=0%)"},
	{"jitter", "rate=10mbit,rtt=40ms,jitter=10ms", "per-packet jitter example: each packet's one-way delay uniform in 20 +- 10 ms, order kept (add reorder=true to let jitter reorder)"},
	{"blackhole", "rate=10mbit,rtt=30ms,outage=5s/2s", "QUIC Interop Runner's blackhole scenario (--on=5s --off=2s): the link is up 5 s, then drops everything for 2 s, repeating"},
}

// Presets lists the named LINK specs Parse accepts, in a stable order.
func Presets() []Preset { return append([]Preset(nil), presets...) }

func lookupPreset(name string) (Preset, bool) {
	for _, p := range presets {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Preset{}, false
}

func presetNames() string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
