// Package fileout writes an output file in one call: create, fill, close, with every error
// naming the file, and nothing half-written left behind by Create. It is the one
// create-write-close path of analysis, studies and cmd/pltlab; it imports nothing of ours.
package fileout

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Create creates path (and its directory, mode 0755), replacing a file there, fills it with
// fn and closes it. When creating, fn or the close fails, the file is removed and the error,
// naming path, is returned: a caller never finds a file cut short.
func Create(path string, fn func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := Fill(path, f, fn); err != nil {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove the partial %s: %w", path, rerr))
		}
		return err
	}
	return nil
}

// Fill fills the open file f, called name in messages, with fn and closes it (in every case);
// an error of fn or of the close is returned naming the file ("write NAME: ..."). The caller
// decides what happens to a file that failed (Create removes it).
func Fill(name string, f io.WriteCloser, fn func(io.Writer) error) error {
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
