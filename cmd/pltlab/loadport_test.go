package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/protocol"
)

// TestLoadWrongPortNamesTheRight (smaller things): h1 asked of the h2 listener names the port
// that serves h1 instead of letting Chromium fail with ERR_SOCKET_NOT_CONNECTED.
func TestLoadWrongPortNamesTheRight(t *testing.T) {
	h2 := testenv.ALPNListener(t, "h2")
	h1 := testenv.ALPNListener(t, "http/1.1")
	ctx := context.Background()
	err := checkListener(ctx, "plt.test", "127.0.0.1", h2, protocol.MustLookup("h1"), []int{h1})
	if err == nil || !isUsage(err) || !strings.Contains(err.Error(), "it serves h2") ||
		!strings.Contains(err.Error(), "h1 is served on port "+itoa(h1)) {
		t.Fatalf("err = %v; want a usage error naming h2 and port %d", err, h1)
	}
	if err := checkListener(ctx, "plt.test", "127.0.0.1", h1, protocol.MustLookup("h1"), nil); err != nil {
		t.Errorf("the right port refused: %v", err)
	}
	if err := checkListener(ctx, "plt.test", "127.0.0.1", h1, protocol.MustLookup("h2"), nil); err == nil || !strings.Contains(err.Error(), "--h1-addr") {
		t.Errorf("h2 on the h1 port: err %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
