package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrVersion is returned (wrapped) by Reader.Next for a record whose "v" is not Version.
// Unlike a LineError it is fatal: a stream of another schema version must not be mixed in.
var ErrVersion = errors.New("unsupported record schema version")

// Writer writes records as JSON Lines: one object per line, written to the underlying writer
// with one Write call per record, so a crash loses at most the record being written.
// It is safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w. If w has a Sync method (an *os.File) it is not called: the
// operating system already holds every record once Write returns.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sets r.V to Version and writes r as one line. It returns the marshalling or write error.
func (w *Writer) Write(r *Record) error {
	r.V = Version
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode record %d: %w", r.Run, err)
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(b); err != nil {
		return fmt.Errorf("write record %d: %w", r.Run, err)
	}
	return nil
}

// LineError reports a line that is not a valid record. The Reader stays usable: call Next again
// to go on with the following line.
type LineError struct {
	// Name is the stream's name (a file name, or "-" for stdin).
	Name string
	// Line is the 1-based line number.
	Line int
	// Err is the decoding error.
	Err error
}

// Error returns "NAME:LINE: ERR".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }

// Unwrap returns the decoding error.
func (e *LineError) Unwrap() error { return e.Err }

// Reader reads records from a JSON Lines stream. Blank lines are skipped. Lines of any length
// are accepted.
type Reader struct {
	name string
	r    *bufio.Reader
	line int
	buf  []byte
}

// NewReader returns a Reader on r; name is used in error messages (a file name, or "-").
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, r: bufio.NewReaderSize(r, 64<<10)}
}

// utf8BOM is the UTF-8 byte order mark (U+FEFF) some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// MaxLineBytes bounds a record's line: a page of 10000 objects takes about 2 MB. A longer line is
// skipped (a *LineError) without being held in memory.
const MaxLineBytes = 16 << 20

// Next returns the next record. At the end of the stream it returns io.EOF. A corrupt,
// truncated or over-long (MaxLineBytes) line gives a *LineError (the caller may skip it and call
// Next again); a record of another schema version gives an error wrapping ErrVersion; a read
// error is returned wrapped.
func (rd *Reader) Next() (*Record, error) {
	for {
		b, tooLong, err := rd.readLine()
		if len(b) == 0 && !tooLong && err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read %s: %w", rd.name, err)
		}
		rd.line++
		if tooLong {
			return nil, &LineError{Name: rd.name, Line: rd.line, Err: fmt.Errorf("line longer than %d bytes", MaxLineBytes)}
		}
		if rd.line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM) // an editor's byte order mark is not part of the record
		}
		b = bytes.TrimSpace(b)
		if len(b) == 0 {
			continue
		}
		return rd.decode(b)
	}
}

// readLine returns the next line; past MaxLineBytes it discards the rest of the line and
// reports tooLong.
func (rd *Reader) readLine() (line []byte, tooLong bool, err error) {
	rd.buf = rd.buf[:0]
	for {
		chunk, err := rd.r.ReadSlice('\n')
		if !tooLong {
			if len(rd.buf)+len(chunk) > MaxLineBytes {
				tooLong, rd.buf = true, rd.buf[:0]
			} else {
				rd.buf = append(rd.buf, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return rd.buf, tooLong, err
		}
	}
}

func (rd *Reader) decode(b []byte) (*Record, error) {
	var probe struct {
		V       *int            `json:"v"`
		Kind    Kind            `json:"kind"`
		Time    time.Time       `json:"time"`
		Interop json.RawMessage `json:"interop"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, &LineError{Name: rd.name, Line: rd.line, Err: err}
	}
	if probe.V == nil {
		return nil, &LineError{Name: rd.name, Line: rd.line, Err: errors.New(`no "v" field: not a pltlab record`)}
	}
	if *probe.V != Version {
		return nil, fmt.Errorf("%s:%d: %w %d (this pltlab reads v%d)", rd.name, rd.line, ErrVersion, *probe.V, Version)
	}
	if probe.Kind == KindInterop && len(probe.Interop) == 0 {
		// `pltlab interop --out` writes the case's own record as the line, whose fields are
		// not Record's (a study wraps it in Interop): either way a reader finds it in Interop.
		return &Record{V: *probe.V, Kind: KindInterop, Time: probe.Time, Run: -1, Interop: json.RawMessage(bytes.Clone(b))}, nil
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &LineError{Name: rd.name, Line: rd.line, Err: err}
	}
	return &r, nil
}

// Line returns the number of the last line read (1-based; 0 before the first).
func (rd *Reader) Line() int { return rd.line }
