//go:build !linux

package shaping

import "log/slog"

// CleanStale does nothing on this platform: it has no pltlab namespaces.
func CleanStale(log *slog.Logger) {}
