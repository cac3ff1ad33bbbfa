package browser

import (
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/chromedp/cdproto/network"
)

// watch follows one navigation's DevTools network events: which requests failed with which
// network error.
type watch struct {
	mu     sync.Mutex
	urls   map[network.RequestID]string
	failed map[string]string // URL path -> error text
	conns  map[string]string // URL -> Chromium connection ID
	record bool              // keep the network events (for a HAR)
	events []netEvent
}

// newWatch returns a watch; with record it also keeps the network events a HAR is built from.
func newWatch(record bool) *watch {
	return &watch{urls: make(map[network.RequestID]string), failed: make(map[string]string),
		conns: make(map[string]string), record: record}
}

// event handles one event; it runs in the tab's read loop, so it only records.
func (w *watch) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.record {
		if ne, ok := recordEvent(ev); ok {
			w.events = append(w.events, ne)
		}
	}
	switch e := ev.(type) {
	case *network.EventResponseReceived:
		if e.Response != nil {
			w.conns[e.Response.URL] = fmt.Sprintf("%.0f", e.Response.ConnectionID)
		}
	case *network.EventRequestWillBeSent:
		if e.Request != nil {
			w.urls[e.RequestID] = e.Request.URL
		}
	case *network.EventLoadingFailed:
		if u, ok := w.urls[e.RequestID]; ok {
			if pu, err := url.Parse(u); err == nil {
				w.failed[pu.Path] = e.ErrorText
			}
		}
	}
}

// failures returns a copy of the failed requests by URL path.
func (w *watch) failures() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.failed))
	for k, v := range w.failed {
		out[k] = v
	}
	return out
}

// connections returns a copy of the connection ID of every URL that got a response.
func (w *watch) connections() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]string, len(w.conns))
	for k, v := range w.conns {
		out[k] = v
	}
	return out
}

// recorded returns the recorded network events.
func (w *watch) recorded() []netEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}
