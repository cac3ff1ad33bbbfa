package browser

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Screencast settings for visual metrics: JPEG frames of at most 800x600 (headless Chromium's
// default window), every frame Chromium paints.
const (
	screencastQuality = 70
	screencastWidth   = 800
	screencastHeight  = 600
	// VisualSettle is how long the screencast goes on after the load event (and the FCP grace),
	// so that paints that follow the load are seen; it lengthens WallMs, not the PLT.
	VisualSettle = 300 * time.Millisecond
)

// screencast collects a tab's screencast frames and acknowledges each one.
type screencast struct {
	mu     sync.Mutex
	frames []rawFrame
}

// rawFrame is a frame as received: its swap time (s since the Unix epoch) and its JPEG.
type rawFrame struct {
	at   float64
	jpeg []byte
}

// event handles a screencast frame; it runs in the tab's read loop, so the acknowledgement
// (without which Chromium stops after 3 frames) is sent from another goroutine.
func (s *screencast) event(ctx context.Context, ev any) {
	f, ok := ev.(*page.EventScreencastFrame)
	if !ok {
		return
	}
	at := 0.0
	if f.Metadata != nil {
		at = float64(f.Metadata.Timestamp)
	}
	s.mu.Lock()
	s.frames = append(s.frames, rawFrame{at: at, jpeg: f.Data})
	s.mu.Unlock()
	id := f.SessionID
	go chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: id})
		return err
	}))
}

// startScreencast starts the screencast of the tab behind ctx and returns its collector.
func startScreencast(ctx context.Context) (*screencast, error) {
	s := &screencast{}
	if err := chromedp.Listen(ctx, func(ev any) { s.event(ctx, ev) }); err != nil {
		return nil, err
	}
	q := int64(screencastQuality)
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatJpeg,
			Quality: &q, MaxWidth: screencastWidth, MaxHeight: screencastHeight, EveryNthFrame: 1})
		return err
	}))
	return s, err
}

// stop waits VisualSettle, stops the screencast and returns the frames with times in ms from
// timeOrigin (performance.timeOrigin, ms since the Unix epoch), in time order.
func (s *screencast) stop(ctx context.Context, timeOrigin float64) []frame {
	time.Sleep(VisualSettle)
	_ = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.StopScreencast, cdp.Empty{})
		return err
	}))
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]frame, 0, len(s.frames))
	for _, f := range s.frames {
		out = append(out, frame{ms: f.at*1000 - timeOrigin, jpeg: f.jpeg})
	}
	slices.SortStableFunc(out, func(a, b frame) int {
		switch {
		case a.ms < b.ms:
			return -1
		case a.ms > b.ms:
			return 1
		}
		return 0
	})
	return out
}
