// Package vcd writes, reads and draws Value Change Dump files (IEEE
// 1364-2005 clause 18), the waveform format GTKWave and every logic
// simulator read. The emulator records its runs with it: untimed runs
// through port wrappers (Recorder), one time step per port operation, and
// timed runs (timed.Board) in real nanoseconds. Parse reads a file back
// (checking it against the standard's grammar) and SVG draws chosen signals
// of it as a waveform picture, as in docs/timing.md.
//
// The package knows nothing of the emulator: a recorder sees a board only
// through the two methods of Source.
package vcd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Writer writes a VCD file: declarations first (Scope, Wire, Event, ...),
// then Begin, then value changes in time order.
type Writer struct {
	w       *bufio.Writer
	err     error
	vars    []wvar
	depth   int
	begun   bool
	now     int64
	stamped bool // "#now" has been written
}

// Var is a variable declared on a Writer.
type Var int

type wvar struct {
	width int
	event bool
	val   string // the value last written ("" before Begin)
}

// NewWriter starts a VCD file on w with the given timescale ("1ns",
// "10ps", ...) and a comment saying what it records.
func NewWriter(w io.Writer, timescale, comment string) (*Writer, error) {
	if _, err := parseTimescale(strings.Fields(timescale)); err != nil {
		return nil, err
	}
	vw := &Writer{w: bufio.NewWriter(w)}
	vw.printf("$version ttlpapers $end\n")
	if comment != "" {
		if strings.Contains(comment, "$end") {
			return nil, errors.New("vcd: a comment must not contain $end")
		}
		vw.printf("$comment %s $end\n", comment)
	}
	vw.printf("$timescale %s $end\n", timescale)
	return vw, nil
}

func (w *Writer) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, args...)
	}
}

func (w *Writer) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("vcd: "+format, args...)
	}
}

// Scope opens a module scope; Upscope closes it.
func (w *Writer) Scope(name string) {
	if w.begun {
		w.fail("scope %q declared after Begin", name)
		return
	}
	w.depth++
	w.printf("$scope module %s $end\n", reference(name, &w.err))
}

// Upscope closes the innermost scope.
func (w *Writer) Upscope() {
	if w.depth == 0 {
		w.fail("Upscope without a scope")
		return
	}
	w.depth--
	w.printf("$upscope $end\n")
}

// Wire declares a wire of the given width (1 for a single line).
func (w *Writer) Wire(name string, width int) Var { return w.declare("wire", name, width, false) }

// Reg declares a register variable, for values a program wrote or read.
func (w *Writer) Reg(name string, width int) Var { return w.declare("reg", name, width, false) }

// Event declares an event: a mark at the times it is fired.
func (w *Writer) Event(name string) Var { return w.declare("event", name, 1, true) }

func (w *Writer) declare(kind, name string, width int, event bool) Var {
	if w.begun {
		w.fail("variable %q declared after Begin", name)
		return -1
	}
	if width < 1 || width > 64 {
		w.fail("variable %q: width %d (use 1 to 64)", name, width)
		return -1
	}
	v := Var(len(w.vars))
	w.vars = append(w.vars, wvar{width: width, event: event})
	w.printf("$var %s %d %s %s $end\n", kind, width, code(int(v)), reference(name, &w.err))
	return v
}

// Alias declares name as another name for v: both show the same values.
func (w *Writer) Alias(name string, v Var) {
	if !w.valid(v) || w.begun {
		w.fail("alias %q of an unknown variable or after Begin", name)
		return
	}
	kind := "wire"
	if w.vars[v].event {
		kind = "event"
	}
	w.printf("$var %s %d %s %s $end\n", kind, w.vars[v].width, code(int(v)), reference(name, &w.err))
}

func (w *Writer) valid(v Var) bool { return v >= 0 && int(v) < len(w.vars) }

// Begin ends the declarations and dumps the initial values at time 0:
// initial[v] for each variable (0 for those it lacks, as a level; x when
// unknown says so).
func (w *Writer) Begin(initial map[Var]Value) {
	if w.begun {
		w.fail("Begin called twice")
		return
	}
	if w.depth != 0 {
		w.fail("%d scopes left open at Begin", w.depth)
	}
	w.begun = true
	w.printf("$enddefinitions $end\n#0\n$dumpvars\n")
	w.stamped = true
	for i := range w.vars {
		if w.vars[i].event {
			continue
		}
		v, ok := initial[Var(i)]
		if !ok {
			v = Bits(0)
		}
		w.emit(Var(i), v)
	}
	w.printf("$end\n")
}

// Value is a variable's value: a number, or unknown (X).
type Value struct {
	bits    uint64
	unknown bool
}

// Bits is a known value.
func Bits(v uint64) Value { return Value{bits: v} }

// Bool is a one-bit value.
func Bool(b bool) Value {
	if b {
		return Value{bits: 1}
	}
	return Value{}
}

// X is the unknown value.
var X = Value{unknown: true}

// Set records v's new value at time t (in timescale units). Times never go
// back; a value equal to the last one written is not repeated.
func (w *Writer) Set(t int64, v Var, val Value) {
	if !w.at(t, v) {
		return
	}
	if w.vars[v].event {
		w.fail("Set on an event (use Fire)")
		return
	}
	w.emit(v, val)
}

// Fire marks event v at time t.
func (w *Writer) Fire(t int64, v Var) {
	if !w.at(t, v) {
		return
	}
	if !w.vars[v].event {
		w.fail("Fire on a variable that is not an event")
		return
	}
	w.stamp()
	w.printf("1%s\n", code(int(v)))
}

// stamp writes the current time before its first change.
func (w *Writer) stamp() {
	if !w.stamped {
		w.printf("#%d\n", w.now)
		w.stamped = true
	}
}

func (w *Writer) at(t int64, v Var) bool {
	switch {
	case w.err != nil:
		return false
	case !w.begun:
		w.fail("value change before Begin")
		return false
	case !w.valid(v):
		w.fail("value change of unknown variable %d", v)
		return false
	case t < w.now:
		w.fail("time %d after time %d: changes must come in time order", t, w.now)
		return false
	}
	if t > w.now || !w.stamped {
		w.now, w.stamped = t, false
	}
	return true
}

func (w *Writer) emit(v Var, val Value) {
	wv := &w.vars[v]
	s := format(val, wv.width)
	if s == wv.val {
		return
	}
	wv.val = s
	w.stamp()
	if wv.width == 1 {
		w.printf("%s%s\n", s, code(int(v)))
	} else {
		w.printf("b%s %s\n", s, code(int(v)))
	}
}

func format(v Value, width int) string {
	if v.unknown {
		return "x"
	}
	if width == 1 {
		return strconv.FormatUint(v.bits&1, 2)
	}
	if width < 64 {
		v.bits &= 1<<width - 1
	}
	return strconv.FormatUint(v.bits, 2)
}

// Close writes a last time stamp at end (so viewers show the tail of the
// run), flushes, and returns the first error met.
func (w *Writer) Close(end int64) error {
	if w.err == nil && w.begun && end > w.now {
		w.printf("#%d\n", end)
	}
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// code is the identifier code of variable i: base-94 over the printable
// characters '!' to '~', as simulators write them.
func code(i int) string {
	var b []byte
	for {
		b = append(b, byte('!'+i%94))
		i /= 94
		if i == 0 {
			return string(b)
		}
		i--
	}
}

// reference writes a name as a Verilog identifier: simple identifiers as
// they are, any other name escaped (a backslash before it), so that names
// such as "PE2.D6" survive as they are in hw and the KiCad files.
func reference(name string, err *error) string {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		if *err == nil {
			*err = fmt.Errorf("vcd: name %q: names must be non-empty and without white space", name)
		}
		return "_"
	}
	if simpleIdentifier(name) {
		return name
	}
	return `\` + name
}

func simpleIdentifier(s string) bool {
	for i, c := range s {
		switch {
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '$'):
		default:
			return false
		}
	}
	return s != ""
}
