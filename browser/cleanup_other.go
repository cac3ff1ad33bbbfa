//go:build !linux

package browser

import "os/exec"

// killLeftovers is a no-op outside Linux: chromedp kills the main process, and child processes
// there exit with it.
func killLeftovers(dir string) {}

// processesUsing finds nothing outside Linux.
func processesUsing(dir string, kill bool) []int { return nil }

// dieWithParent does nothing outside Linux (no Pdeathsig); Close ends the browser.
func dieWithParent(cmd *exec.Cmd) {}
