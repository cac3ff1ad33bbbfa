package testenv

import "testing"

// TestHave: a tool on every PATH is found, a made-up one is not; PLTLAB_CHROME names Chromium.
func TestHave(t *testing.T) {
	if !Have("sh") {
		t.Error("sh not found")
	}
	if Have("pltlab-no-such-tool") {
		t.Error("a made-up tool found")
	}
	t.Setenv("PLTLAB_CHROME", "/nonexistent/chromium")
	if Have("chromium") {
		t.Error("chromium found at a PLTLAB_CHROME that does not exist")
	}
}

// TestInCI: CI=true is CI, unset or "false" is not.
func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true} {
		t.Setenv("CI", v)
		if InCI() != want {
			t.Errorf("CI=%q: InCI %v, want %v", v, InCI(), want)
		}
	}
}
