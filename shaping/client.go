package shaping

import "runtime"

// InClient runs fn on a locked OS thread inside l's client network namespace (in this namespace
// for an unshaped link) and returns its error. Sockets that fn creates (net.Dial,
// net.ListenUDP) keep that namespace for their whole life and may be used from any goroutine
// afterwards; fn itself must not start goroutines that create sockets.
func InClient(l Link, fn func() error) error {
	if ns := l.Namespace(); ns != "" {
		return inNamespace(ns, fn)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn()
}
