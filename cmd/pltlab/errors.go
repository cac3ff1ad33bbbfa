package main

import (
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

// exitArtifacts is the exit code of a run, load or flows that measured what it was asked to
// but could not write some of its artifacts whole (a full or failing filesystem): the records
// are complete and list those files in "artifacts_failed"; the evidence is not.
const exitArtifacts = 3
