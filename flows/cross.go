package flows

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// crossRetry is how long Cross waits before reconnecting after its flow failed.
const crossRetry = time.Second

// Cross is a bulk download kept running through a link as cross traffic (`pltlab run --cross`):
// its own page-less server on the link's host address, one flow of its Spec, reconnected
// whenever it ends, until Close.
type Cross struct {
	spec   Spec
	srv    *server.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartCross starts cross traffic of flow s through l and returns once its first connection is
// up (or failed: the error is returned and nothing keeps running).
func StartCross(ctx context.Context, l shaping.Link, s Spec, log *slog.Logger) (*Cross, error) {
	log = cmp.Or(log, slog.Default())
	ctx, cancel := context.WithCancel(ctx)
	srv, err := NewServer(ctx, l, log)
	if err != nil {
		cancel()
		return nil, err
	}
	resolved, err := ResolveQUIC([]Spec{s}, srv.Info().H3Stack, "")
	if err != nil {
		cancel()
		return nil, errors.Join(err, srv.Close())
	}
	s = resolved[0]
	c := &Cross{spec: s, srv: srv, cancel: cancel}
	t := newTarget(l, srv)
	tr, err := t.dial(ctx, s)
	if err == nil && tr.validErr != nil {
		tr.close()
		err = tr.validErr
	}
	if err != nil {
		cancel()
		return nil, errors.Join(err, srv.Close())
	}
	c.wg.Go(func() { c.loop(ctx, t, tr, log) })
	return c, nil
}

// loop drains tr, then reconnects, until ctx ends.
func (c *Cross) loop(ctx context.Context, t target, tr *transfer, log *slog.Logger) {
	for {
		stop := context.AfterFunc(ctx, func() { tr.close() })
		_, err := io.Copy(io.Discard, tr.body)
		stop()
		tr.close()
		if ctx.Err() != nil {
			return
		}
		log.Warn("cross traffic flow ended; reconnecting", "flow", c.spec.String(), "err", err)
		for {
			if !sleepUntil(ctx, time.Now().Add(crossRetry)) {
				return
			}
			if tr, err = t.dial(ctx, c.spec); err == nil {
				break
			}
			log.Warn("cross traffic reconnect failed", "flow", c.spec.String(), "err", err)
		}
	}
}

// Spec returns the cross traffic's flow.
func (c *Cross) Spec() Spec { return c.spec }

// Close stops the flow and its server.
func (c *Cross) Close() error {
	c.cancel()
	c.wg.Wait()
	return c.srv.Close()
}
