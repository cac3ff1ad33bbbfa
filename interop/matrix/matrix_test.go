package matrix

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/interop/quicgo"
)

// TestParseServers: the project's stacks and any release in quic-go's history are accepted,
// anything else is refused naming the value, without the network.
func TestParseServers(t *testing.T) {
	got, err := ParseServers("quic-go, ngtcp2,quic-go@v0.33.0,quic-go@v0.66.0")
	if err != nil || !slices.Equal(got, []string{"quic-go", "ngtcp2", "quic-go@v0.33.0", "quic-go@v0.66.0"}) {
		t.Fatalf("%v, %v", got, err)
	}
	for in, want := range map[string]string{
		"picoquic":                        `"picoquic": accepted quic-go, ngtcp2, or quic-go@vX.Y.Z`,
		"quic-go@v0.32.0":                 `"quic-go@v0.32.0": bad quic-go version "v0.32.0": accepted a release v0.33.0 to v0.66.x`,
		"quic-go@v0.67.0":                 `bad quic-go version "v0.67.0"`,
		"quic-go@master":                  `bad quic-go version "master"`,
		"quic-go@v0.40.1,quic-go@v0.40.1": `"quic-go@v0.40.1": given twice`,
		"":                                `"": accepted`,
	} {
		if _, err := ParseServers(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if v, ok := Release("quic-go@v0.40.1"); !ok || v != "v0.40.1" || ReleaseName(v) != "quic-go@v0.40.1" {
		t.Errorf("Release: %q %v", v, ok)
	}
}

// TestStartRefusesBeforeBuilding: Start refuses a release outside the history before the cache
// is touched.
func TestStartRefusesBeforeBuilding(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(context.Background(), "quic-go@v0.99.0", Options{Cache: dir})
	if !errors.Is(err, quicgo.ErrVersion) {
		t.Fatalf("%v, want ErrVersion", err)
	}
}
