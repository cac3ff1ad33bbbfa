package shaping

import "log/slog"

// CleanStale deletes the pltlab network namespaces and host devices whose owning process is
// gone (a run killed with SIGKILL), logging each on log; Open does it too, so that a start with
// no emulated link (--link none) also clears what a killed run left. It needs root; without it
// nothing is deleted.
func CleanStale(log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cleanStale(log)
}
