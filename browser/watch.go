package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sync"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
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
	// bodies are the response bodies read after the load (readBodies), by request ID.
	bodies map[network.RequestID][]byte
	// reqs follows every request (netRequest), in issue order (order), for the objects Chromium
	// gives no Resource Timing entry (netResources).
	reqs  map[network.RequestID]*netRequest
	order []network.RequestID
}

// newWatch returns a watch; with record it also keeps the network events a HAR is built from.
func newWatch(record bool) *watch {
	return &watch{urls: make(map[network.RequestID]string), failed: make(map[string]string),
		conns: make(map[string]string), record: record, reqs: make(map[network.RequestID]*netRequest)}
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
	w.follow(ev)
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
	return maps.Clone(w.failed)
}

// connections returns a copy of the connection ID of every URL that got a response.
func (w *watch) connections() map[string]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.conns)
}

// finishedIDs returns the IDs of the requests that finished loading, in event order.
func (w *watch) finishedIDs() []network.RequestID {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []network.RequestID
	for _, e := range w.events {
		if e.Method != string(cdproto.EventNetworkLoadingFinished) {
			continue
		}
		var ev struct {
			RequestID network.RequestID `json:"requestId"`
		}
		if json.Unmarshal(e.Params, &ev) == nil && ev.RequestID != "" {
			ids = append(ids, ev.RequestID)
		}
	}
	return ids
}

// readBodies reads the body of every finished request of a recorded load with
// Network.getResponseBody (decoded from base64 when Chromium sends it so) while the tab still
// holds them, for the HAR's response.content.text. It runs after the timings were read, so it
// is not part of the load. A body Chromium no longer has (a redirect, an evicted resource) is
// left out; the HAR's entry then has no text.
func (w *watch) readBodies(tab context.Context) {
	if !w.record {
		return
	}
	ids := w.finishedIDs()
	bodies := make(map[network.RequestID][]byte, len(ids))
	_ = chromedp.Do(tab, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, id := range ids {
			r, err := cdp.Call(ctx, t, network.GetResponseBody, network.GetResponseBodyParams{RequestID: id})
			if err == nil {
				bodies[id] = r.Body
			}
		}
		return nil
	}))
	w.mu.Lock()
	w.bodies = bodies
	w.mu.Unlock()
}

// responseBodies returns the bodies readBodies read (nil before it ran).
func (w *watch) responseBodies() map[network.RequestID][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bodies
}

// recorded returns the recorded network events.
func (w *watch) recorded() []netEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}
