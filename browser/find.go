package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// ErrNoChromium is returned (wrapped) when no Chromium executable is found. Its message gives the
// fix.
var ErrNoChromium = errors.New("no Chromium found: install it with `apt-get install -y chromium`, or give its path with --chrome PATH or $PLTLAB_CHROME")

// EnvChrome is the environment variable FindChromium reads when no path is given.
const EnvChrome = "PLTLAB_CHROME"

// Candidates are the executable names FindChromium looks up on PATH, in order.
var Candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ProcessNames are the executable names (/proc/PID/comm, at most 15 bytes) that a Chromium of
// Candidates and every helper process it starts (renderers, the GPU and network service
// processes, the zygote) run under: "chromium" for Debian's build (all 9 processes of a
// headless browser on about:blank, checked 2026-12-02), "chrome" for Google's, plus the names
// a packaged build's launcher scripts run under.
var ProcessNames = []string{"chromium", "chrome", "chromium-browse", "google-chrome", "headless_shell"}

// FindChromium returns the absolute path of the Chromium to run: path if not empty (a path or a
// name on PATH), else $PLTLAB_CHROME, else the first of Candidates found on PATH. It returns an
// error wrapping ErrNoChromium when the chosen one does not exist or none is found.
func FindChromium(path string) (string, error) {
	if path == "" {
		path = os.Getenv(EnvChrome)
	}
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("chromium %q: %w (%v)", path, ErrNoChromium, err)
		}
		return p, nil
	}
	for _, name := range Candidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoChromium
}
