package main

import (
	"io"
	"log"
	"os"
)

// processSettings makes the process-wide settings a study's schedule switches arm by arm
// (studies.ProcessSettings): the one place where pltlab changes them, here in main. Arms run one
// at a time, so a setting is never shared by two.
type processSettings struct{}

// DisableQUICGSO sets QUIC_GO_DISABLE_GSO=true (quic-go reads it whenever it wraps a UDP
// socket) and returns the function that puts back the value it had, or unsets it.
func (processSettings) DisableQUICGSO() func() {
	old, had := os.LookupEnv("QUIC_GO_DISABLE_GSO")
	os.Setenv("QUIC_GO_DISABLE_GSO", "true")
	return func() {
		if had {
			os.Setenv("QUIC_GO_DISABLE_GSO", old)
		} else {
			os.Unsetenv("QUIC_GO_DISABLE_GSO")
		}
	}
}

// CaptureLog copies the standard logger's output (quic-go's warnings) to w as well and returns
// the function that restores the output it had.
func (processSettings) CaptureLog(w io.Writer) func() {
	old := log.Writer()
	log.SetOutput(io.MultiWriter(old, w))
	return func() { log.SetOutput(old) }
}
