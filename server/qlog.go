package server

import (
	"bufio"
	"context"
	"os"
	"path/filepath"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
)

// QlogFileName is the name of the qlog of the QUIC connection whose original destination
// connection ID is odcid (hex): "h3-server-ODCID.sqlog" (JSON-SEQ, RFC 7464).
func QlogFileName(odcid string) string { return "h3-server-" + odcid + ".sqlog" }

// qlogTracer is the quic.Config.Tracer of the listener: with WithQlogDir, one qlog file per
// server connection in the directory current at the connection's start (after quic-go's
// DefaultConnectionTracer, which reads QLOGDIR instead).
func (s *Server) qlogTracer(_ context.Context, isClient bool, odcid quic.ConnectionID) qlogwriter.Trace {
	if s.cfg.qlogDir == nil || isClient {
		return nil
	}
	dir := s.cfg.qlogDir()
	if dir == "" {
		return nil
	}
	path := filepath.Join(dir, QlogFileName(odcid.String()))
	f, err := os.Create(path)
	if err != nil {
		s.log.Warn("qlog: create file", "path", path, "err", err)
		return nil
	}
	seq := qlogwriter.NewConnectionFileSeq(&bufferedFile{w: bufio.NewWriter(f), f: f}, false, odcid)
	go seq.Run()
	return seq
}

// The qlog package registers quic-go's QUIC event schema when imported.
var _ = qlog.EventSchema

// bufferedFile is a buffered file that flushes on Close.
type bufferedFile struct {
	w *bufio.Writer
	f *os.File
}

func (b *bufferedFile) Write(p []byte) (int, error) { return b.w.Write(p) }

func (b *bufferedFile) Close() error {
	err := b.w.Flush()
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	return err
}
