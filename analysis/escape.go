package analysis

import (
	"fmt"
	"io"
)

// controlEscaper writes what it is given with the terminal's control characters made visible:
// C0 controls other than tab and newline, DEL and the C1 controls (U+0080..U+009F, as UTF-8)
// are written as Go escapes ("\x1b", "\u009b"), so that a string read from a result file (a
// page spec, an experiment name, an invalid reason) can neither move the cursor nor change
// the terminal of whoever prints a report.
type controlEscaper struct {
	w       io.Writer
	pending bool // the last byte written was 0xC2, the first byte of a C1 control's UTF-8
	buf     []byte
}

// escapeControls returns a writer that writes to w with control characters escaped (see
// controlEscaper).
func escapeControls(w io.Writer) io.Writer { return &controlEscaper{w: w} }

// Write escapes p's control characters and writes the result to the underlying writer; it
// returns len(p) when that write succeeds.
func (e *controlEscaper) Write(p []byte) (int, error) {
	e.buf = e.buf[:0]
	for _, b := range p {
		if e.pending {
			e.pending = false
			if b >= 0x80 && b <= 0x9f {
				e.buf = fmt.Appendf(e.buf, `\u%04x`, b)
				continue
			}
			e.buf = append(e.buf, 0xc2)
		}
		switch {
		case b == 0xc2:
			e.pending = true
		case b < 0x20 && b != '\t' && b != '\n' || b == 0x7f:
			e.buf = fmt.Appendf(e.buf, `\x%02x`, b)
		default:
			e.buf = append(e.buf, b)
		}
	}
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
