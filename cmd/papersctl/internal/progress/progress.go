// Package progress shows how long work is getting on, for a person at a
// terminal only: one line on stderr, rewritten in place and erased before
// the results are printed. When the stream is not a terminal (a pipe, a log
// file, CI) nothing is written, so logs get the results alone.
package progress

import (
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/term"
)

// Width is the most columns a progress line takes: a longer line would
// wrap, and a carriage return then rewrites only its last row.
const Width = 79

// Line is one line of progress. A nil *Line shows nothing, so callers need
// not ask whether there is a terminal. Its methods may be called from any
// goroutine.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	shown bool
}

// New returns a Line on w, or nil when w is not a terminal.
func New(w io.Writer) *Line {
	if !term.IsTerminal(w) {
		return nil
	}
	return &Line{w: w}
}

// Show replaces the line with the formatted text, cut to Width columns.
func (l *Line) Show(format string, args ...any) {
	if l == nil {
		return
	}
	s := fmt.Sprintf(format, args...)
	if utf8.RuneCountInString(s) > Width {
		r := []rune(s)
		s = string(r[:Width-1]) + "…"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "\r\x1b[K%s", s) // ESC [ K: erase to the end of the line
	l.shown = true
}

// Clear erases the line, so that what is printed next starts on a clean
// line. It is safe to call when nothing is shown.
func (l *Line) Clear() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		io.WriteString(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// Above returns a writer that erases the line before each write to w, so
// that output to the same terminal (stdout, say) starts on a clean line.
// A nil Line returns w itself.
func (l *Line) Above(w io.Writer) io.Writer {
	if l == nil {
		return w
	}
	return above{l, w}
}

type above struct {
	l *Line
	w io.Writer
}

func (a above) Write(b []byte) (int, error) {
	a.l.Clear()
	return a.w.Write(b)
}
