package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// usageError marks a bad command line: main prints it on one line and exits with code 2.
type usageError struct{ err error }

// Error returns the message on one line (joined errors are separated by "; ").
func (e *usageError) Error() string { return strings.ReplaceAll(e.err.Error(), "\n", "; ") }
func (e *usageError) Unwrap() error { return e.err }

// usagef returns a usage error (exit code 2) formatted like fmt.Errorf.
func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// asUsage marks err as a usage error; nil stays nil.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}

// exitError makes main exit with code; err (if not nil) is printed first.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// stopError maps how a command that makes measurements stopped to its exit code, the one
// mapping of run, reproduce and flows: an interrupt (ctx done: Ctrl-C or SIGTERM) exits with
// 130 saying that kept (what was written) is kept; a reader of the output that went away
// (broken pipe) exits with 141, everything set up having been torn down; any other err is
// returned as it is (nil stays nil).
func stopError(ctx context.Context, err error, kept string) error {
	switch {
	case ctx.Err() != nil:
		return &exitError{code: 130, err: fmt.Errorf("interrupted; %s", kept)}
	case isBrokenPipe(err):
		return &exitError{code: 141, err: errors.New("the reader of the output went away (broken pipe): stopped; everything set up was torn down")}
	}
	return err
}

// exitArtifacts is the exit code of a run, load or flows that measured what it was asked to
// but could not write some of its artifacts whole (a full or failing filesystem): the records
// are complete and list those files in "artifacts_failed"; the evidence is not.
const exitArtifacts = 3
