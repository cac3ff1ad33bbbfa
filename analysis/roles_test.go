package analysis

import (
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestGroupKeyReadsSettingsOnly: every record field that a group's Key is made of (the page
// and link labels, mode, protocol and the settings label, settingsIndex.of) is one that
// package result classes as a setting (result.FieldRole), the one definition the view's
// comparison also follows; a measurement never splits or joins a group.
func TestGroupKeyReadsSettingsOnly(t *testing.T) {
	for _, path := range []string{
		"page.spec", "replay.digest", // Record.PageLabel
		"link.spec", "link.inputs", // Link.Label
		"mode", "protocol",
		"settings.tcp_cc", "settings.tls", "tcp_cc", "tls_version", "browser", "env.pltlab", "cross",
		"settings.device", "device.spec", "settings.h3_stack", "settings.quic_cc", // settingsIndex.of
	} {
		if role, ok := result.FieldRole(path); !ok || role != result.RoleSetting {
			t.Errorf("the group key reads %s, whose role is %q (known %v); want %q", path, role, ok, result.RoleSetting)
		}
	}
}
