package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// outMode says what may happen to an existing output file.
type outMode int

const (
	// outNew refuses an existing file.
	outNew outMode = iota
	// outReplace truncates an existing file (--force), once its lock is held.
	outReplace
	// outAppend appends to an existing file (--resume); the file must exist.
	outAppend
)

// outFile is an output file checked and locked before any work is done: a regular file (or a
// character device such as /dev/null), never a directory, a FIFO or a socket, held under an
// exclusive flock(2) so that no other pltlab process writes into it at the same time. A file
// it created is removed again by Close when nothing was written to it.
type outFile struct {
	name    string
	flag    string // the flag that named it, for messages: "--out"
	f       *os.File
	created bool
	written bool
}

// errLocked is wrapped when another process holds an output file's lock.
var errLocked = errors.New("in use by another pltlab process")

// openOut checks and opens name ("-" is not a file: the caller uses stdout) for writing under
// an exclusive lock, as mode allows. All refusals are usage errors naming the file and what is
// accepted.
func openOut(flag, name string, mode outMode) (*outFile, error) {
	exists, err := checkOutPath(flag, name, mode)
	if err != nil {
		return nil, err
	}
	// O_NONBLOCK: should a FIFO appear after the check, open fails (ENXIO) instead of waiting
	// for a reader; it changes nothing for regular files.
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|unix.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, usagef("bad %s %s: %v", flag, name, errors.Unwrap(err))
	}
	o := &outFile{name: name, flag: flag, f: f, created: !exists}
	if exists && mode == outNew {
		// checkOutPath let an existing file through only when empty: no line was ever written
		// into it (a run killed before its first record leaves such a file). It is written into
		// and, as a file this run created, removed again when nothing is written.
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			slog.Warn(fmt.Sprintf("%s %s exists but is empty (left by a run killed before its first record?): writing into it", flag, name))
			o.created = true
		}
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			o.abandon()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, usagef("%s %s is %w (it holds the file's lock): wait for it to finish or choose another file", flag, name, errLocked)
			}
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		if err := o.position(mode, st.Size()); err != nil {
			o.abandon()
			return nil, err
		}
	}
	return o, nil
}

// checkOutPath makes openOut's checks of name without opening it (a usage error naming the
// file and what is accepted), so that a command can refuse a bad output before anything else;
// exists says whether the file is there.
func checkOutPath(flag, name string, mode outMode) (exists bool, err error) {
	st, err := os.Stat(name)
	exists = err == nil
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, usagef("bad %s %s: %v", flag, name, errors.Unwrap(err))
	case !exists:
		if dst, err := os.Stat(filepath.Dir(name)); err != nil || !dst.IsDir() {
			return false, usagef("bad %s %s: directory %s does not exist", flag, name, filepath.Dir(name))
		}
		if mode == outAppend {
			return false, usagef("bad %s %s: --resume needs the file of the interrupted run, and it does not exist", flag, name)
		}
	case st.IsDir():
		return true, usagef("bad %s %s: a directory (accepted a file name, or - for stdout)", flag, name)
	case st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0:
		return true, usagef("bad %s %s: a FIFO or socket (accepted a regular file, or - for stdout)", flag, name)
	case st.Mode().IsRegular() && mode == outNew && st.Size() > 0:
		return true, usagef("%s %s exists: remove it or add --force", flag, name)
	}
	return exists, nil
}

// position truncates (outReplace) or goes to the end of the file (outAppend), starting a new
// line if the last one was cut short (a killed run).
func (o *outFile) position(mode outMode, size int64) error {
	switch mode {
	case outReplace:
		if err := o.f.Truncate(0); err != nil {
			return fmt.Errorf("truncate %s: %w", o.name, err)
		}
	case outAppend:
		if size == 0 {
			return nil
		}
		last := make([]byte, 1)
		r, err := os.Open(o.name)
		if err != nil {
			return fmt.Errorf("resume %s: %w", o.name, err)
		}
		defer r.Close()
		if _, err := r.ReadAt(last, size-1); err != nil {
			return fmt.Errorf("resume %s: %w", o.name, err)
		}
		if _, err := o.f.Seek(0, io.SeekEnd); err != nil {
			return fmt.Errorf("resume %s: %w", o.name, err)
		}
		if last[0] != '\n' {
			if _, err := o.f.Write([]byte("\n")); err != nil {
				return fmt.Errorf("resume %s: %w", o.name, err)
			}
		}
	}
	return nil
}

// Write writes to the file.
func (o *outFile) Write(b []byte) (int, error) {
	o.written = true
	return o.f.Write(b)
}

// Close closes the file (releasing its lock); a file created by openOut that was never
// written to is removed, so a run that failed before its first record leaves nothing behind.
func (o *outFile) Close() error {
	if o == nil || o.f == nil {
		return nil
	}
	if o.created && !o.written {
		os.Remove(o.name) // before the lock is released: no other process can have begun
	}
	err := o.f.Close()
	o.f = nil
	return err
}

// abandon closes the file after a refusal, removing it if openOut created it.
func (o *outFile) abandon() {
	if o.created {
		os.Remove(o.name)
	}
	o.f.Close()
	o.f = nil
}

// sameFile reports whether the files a and b are one file (however named: links, ./, ..);
// false when either cannot be examined.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// isBrokenPipe reports whether err is a write to a pipe whose reader went away.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

var _ io.WriteCloser = (*outFile)(nil)
