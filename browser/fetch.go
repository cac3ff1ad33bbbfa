package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Fetched is what one URL gave a Fetch: the bytes the page's fetch() read, or why it read none.
type Fetched struct {
	// URL is the URL fetched.
	URL string `json:"url"`
	// Status is the HTTP status code (0 when no response came).
	Status int `json:"status"`
	// Body is the response body as the page read it; nil when the fetch failed or the status
	// was not 2xx.
	Body []byte `json:"body"`
	// Protocol is the resource's nextHopProtocol (Resource Timing: "h3" over HTTP/3; "" when
	// Chromium recorded none).
	Protocol string `json:"protocol"`
	// Err is why no body was read ("" when one was): the page's exception ("TypeError: Failed
	// to fetch") or "HTTP STATUS".
	Err string `json:"error"`
}

// fetchJS fetches every URL of the JSON array %s at once (cache "no-store": always from the
// network) and resolves to one object per URL, the body as base64 (which encoding/json reads
// into a []byte).
const fetchJS = `(async (urls) => {
  const b64 = (buf) => {
    const u = new Uint8Array(buf);
    let s = '';
    for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
    return btoa(s);
  };
  return Promise.all(urls.map(async (url) => {
    const out = {url, status: 0, body: null, protocol: '', error: ''};
    try {
      const r = await fetch(url, {cache: 'no-store'});
      out.status = r.status;
      const buf = await r.arrayBuffer();
      if (r.ok) out.body = b64(buf); else out.error = 'HTTP ' + r.status;
    } catch (e) {
      out.error = String(e);
    }
    const t = performance.getEntriesByName(url).pop();
    if (t) out.protocol = t.nextHopProtocol;
    return out;
  }));
})(%s)`

// closeConnectionsJS closes every connection of the profile's network context (TCP, HTTP/2 and
// QUIC sessions) and keeps its TLS and QUIC session caches: chrome.benchmarking, which
// --enable-net-benchmarking (WithNetBenchmarking) gives every page.
const closeConnectionsJS = `chrome.benchmarking.closeConnections()`

// Fetch navigates the browser's first tab to page and has that page fetch() every URL of urls
// at once (cache "no-store"), returning what each gave, in the order of urls; timeout bounds
// the navigation and the fetches together (0: DefaultTimeout). The tab belongs to the profile's
// own BrowserContext, not to a fresh one as Load's tabs do, so the TLS and QUIC sessions of one
// Fetch are there for the next (resumption, 0-RTT) and its connections too, unless
// CloseConnections closed them. page and every URL must be on the browser's host and port
// (as Load's URL). Errors: a URL refused, a navigation that fails (its network error: then no
// URL was fetched), a timeout, or a browser that cannot be (re)launched; a fetch that fails is
// no error but its Fetched.Err.
func (b *Browser) Fetch(ctx context.Context, page string, urls []string, timeout time.Duration) ([]Fetched, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range append([]string{page}, urls...) {
		if err := b.checkURL(u); err != nil {
			return nil, err
		}
	}
	if err := b.ensure(); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	rctx, cancel := context.WithTimeout(b.proc.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	list, _ := json.Marshal(urls)
	err := chromedp.Do(rctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	}), chromedp.Navigate(page))
	var got []Fetched
	if err == nil {
		got, err = chromedp.Run(rctx, chromedp.Evaluate[[]Fetched](fmt.Sprintf(fetchJS, list), chromedp.EvalAwaitPromise))
	}
	if err != nil {
		var le *chromedp.LoadError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("fetch from %s: navigation failed: %s", page, le.ErrorText)
		}
		return nil, fmt.Errorf("fetch from %s: %w", page, err)
	}
	return got, nil
}

// CloseConnections closes every connection of the browser's profile (chrome.benchmarking's
// closeConnections, in the tab Fetch uses) and keeps its TLS and QUIC sessions, so that the
// next Fetch opens a new connection that may resume a session and send 0-RTT. It needs
// WithNetBenchmarking. Errors: no net benchmarking, or the tab did not answer within
// setupTimeout.
func (b *Browser) CloseConnections(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.cfg.netBenchmarking {
		return errors.New("browser: CloseConnections needs WithNetBenchmarking")
	}
	if err := b.ensure(); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(b.proc.ctx, setupTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if err := chromedp.Do(rctx, chromedp.Evaluate[chromedp.Void](closeConnectionsJS, chromedp.EvalAwaitPromise)); err != nil {
		return fmt.Errorf("close chromium's connections: %w", err)
	}
	return nil
}
