package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pltlab/pltlab/view"
	"github.com/pltlab/pltlab/view/studyview"
)

// viewFlags are the flags of 'pltlab view'.
type viewFlags struct {
	addr string
	open bool
}

// newViewCmd builds 'pltlab view': the results in a browser, live while they are written.
func newViewCmd() *cobra.Command {
	var f viewFlags
	cmd := &cobra.Command{
		Use:   "view [DIR|FILE...] [--addr 127.0.0.1:8080] [--open]",
		Short: "Browse result directories in a browser: runs, studies, loads, comparisons, live runs",
		Long: `view serves, read-only, every result set under the given directories and files (default:
results/): an index (date, settings, loads, validity, configuration hash; shard files of one
sharded run merged), per study its findings table then its report, per group its statistics
with CIs, ECDF and box plot and every load, per load its waterfall, filmstrip, emulator
counters and evidence files (HAR, NetLog, qlog, pcapng) to download, and a compare page for any
two groups or result sets. Pages of a file being written update live (progress, running
medians, new loads). Numbers and plots are those of 'pltlab report'. It binds to loopback
unless --addr says otherwise, serves nothing outside the given paths and fetches nothing from
elsewhere (works offline).`,
		Example: `  ./bin/pltlab view results/
  ./bin/pltlab view results/carlucci2015 /tmp/a.jsonl --addr 127.0.0.1:9000 --open`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"results"}
			}
			return runView(cmd.Context(), args, f, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.addr, "addr", view.DefaultAddr, "HOST:PORT to listen on (loopback unless told otherwise; port 0 picks a free one)")
	cmd.Flags().BoolVar(&f.open, "open", false, "open the index in the desktop's browser (xdg-open)")
	return cmd
}

// runView checks the paths and the address, then serves until interrupted.
func runView(ctx context.Context, paths []string, f viewFlags, stderr io.Writer) error {
	srv, err := newViewServer(paths, f.addr, stderr)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, f.addr, func(a net.Addr) {
		url := "http://" + a.String() + "/"
		fmt.Fprintf(stderr, "pltlab view: serving %d path(s) on %s (Ctrl-C stops)\n", len(paths), url)
		if f.open {
			if err := exec.Command("xdg-open", url).Start(); err != nil {
				fmt.Fprintf(stderr, "pltlab view: --open: %v; open %s yourself\n", err, url)
			}
		}
	})
}

// newViewServer validates addr and paths (usage errors) and warns when addr is not loopback.
func newViewServer(paths []string, addr string, stderr io.Writer) (*view.Server, error) {
	loop, err := view.IsLoopback(addr)
	if err != nil {
		return nil, usagef("%v", err)
	}
	srv, err := view.New(view.Options{Roots: paths, Study: studyview.Report, Logger: slog.Default()})
	if err != nil {
		return nil, usagef("%v", err)
	}
	if !loop {
		fmt.Fprintf(stderr, "pltlab view: WARNING: --addr %s is not loopback: anyone who can reach it can read these results\n", addr)
	}
	return srv, nil
}

// addViewFlag registers --view[=HOST:PORT] on a measuring command: serve its output live.
func addViewFlag(fl *pflag.FlagSet, addr *string) {
	fl.StringVar(addr, "view", "", "serve the results live in a browser while they are written (pltlab view) (--view: on "+view.DefaultAddr+", --view=HOST:PORT: there)")
	fl.Lookup("view").NoOptDefVal = view.DefaultAddr
}

// checkViewFlag refuses, as a usage error and without binding anything, a --view address that
// is not HOST:PORT or a --view beside results written to stdout (out "-"); addr "" is no view.
func checkViewFlag(addr, out string) error {
	if addr == "" {
		return nil
	}
	if out == "-" {
		return usagef("--view serves the results file: give --out FILE, not stdout")
	}
	if _, err := view.IsLoopback(addr); err != nil {
		return usagef("bad --view %q: accepted HOST:PORT, e.g. %s", addr, view.DefaultAddr)
	}
	return nil
}

// startViewBeside serves out (the results file of run, the directory of reproduce) live on addr
// beside the measurement and returns the function that stops it; addr "" starts nothing. The
// address is bound at once (a bad or busy one is an error before anything is measured); pages
// are served as soon as out exists. Errors of the view after that are printed and never fail
// the measurement.
func startViewBeside(ctx context.Context, addr, out string, stderr io.Writer) (stop func(), err error) {
	if err := checkViewFlag(addr, out); err != nil || addr == "" {
		return func() {}, err
	}
	loop, _ := view.IsLoopback(addr) // checked
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("--view: %v", err)
	}
	if !loop {
		fmt.Fprintf(stderr, "pltlab: WARNING: --view %s is not loopback: anyone who can reach it can read these results\n", addr)
	}
	fmt.Fprintf(stderr, "pltlab: live view of %s on http://%s/ (it stops with the measurement; afterwards: pltlab view %s)\n", out, ln.Addr(), out)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer ln.Close()
		if err := serveWhenThere(ctx, ln, out); err != nil {
			fmt.Fprintf(stderr, "pltlab: --view: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// serveWhenThere waits for out to exist (the measurement creates it), then serves it on ln.
func serveWhenThere(ctx context.Context, ln net.Listener, out string) error {
	for {
		if _, err := os.Stat(out); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	srv, err := view.New(view.Options{Roots: []string{out}, Study: studyview.Report, Logger: slog.Default()})
	if err != nil {
		return err
	}
	return srv.ServeOn(ctx, ln)
}
