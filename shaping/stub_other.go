//go:build !linux

package shaping

import (
	"context"
	"errors"
	"os/exec"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

func openEmu(ctx context.Context, spec linkspec.Spec, o options) (Link, error) {
	return nil, errors.ErrUnsupported
}

func openNetem(ctx context.Context, spec linkspec.Spec, o options) (Link, error) {
	return nil, errors.ErrUnsupported
}

func inNamespace(name string, fn func() error) error { return errors.ErrUnsupported }

// Teardown does nothing on this platform: no link can be opened.
func Teardown() {}

// RootlessCommand is only available on Linux; elsewhere it returns a command that fails.
func RootlessCommand(path string, args []string) *exec.Cmd { return exec.Command(path, args...) }

// PrepareRootless is only available on Linux.
func PrepareRootless() error { return errors.ErrUnsupported }

// VethLink is only available on Linux; elsewhere OpenVeth fails and no VethLink exists.
type VethLink struct{ Link }

// OpenVeth is only available on Linux: it returns errors.ErrUnsupported.
func OpenVeth(ctx context.Context, tcpBufMax int) (*VethLink, error) {
	return nil, errors.ErrUnsupported
}

// SetOffloads is only available on Linux: it returns errors.ErrUnsupported.
func (l *VethLink) SetOffloads(ctx context.Context, on bool) error { return errors.ErrUnsupported }

// netemMissing is true outside Linux: there is no tc.
func netemMissing() bool { return true }

// Child runs no emulator process outside Linux: it is idlepoll.Child.
func Child() (code int, ok bool) { return idlepoll.Child() }
