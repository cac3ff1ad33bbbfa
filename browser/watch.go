package browser

import (
	"net/url"
	"sync"

	"github.com/chromedp/cdproto/network"
)

// watch follows one navigation's DevTools network events: which requests failed with which
// network error.
type watch struct {
	mu     sync.Mutex
	urls   map[network.RequestID]string
	failed map[string]string // URL path -> error text
}

func newWatch() *watch {
	return &watch{urls: make(map[network.RequestID]string), failed: make(map[string]string)}
}

// event handles one event; it runs in the tab's read loop, so it only records.
func (w *watch) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
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
