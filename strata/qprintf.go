package strata

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// Qprintf's queue: a ring of fixed-size records, allocated once, so that
// queueing never allocates and never blocks (the manual's promise: it can be
// used anywhere without changing the timing of the code around it).
const (
	qRecords   = 256 // messages held before EmptyPrintQ must run
	qRecordLen = 160 // bytes per message; longer ones are cut, ending in "..."
)

type qrecord struct {
	w   io.Writer
	n   uint8
	buf [qRecordLen]byte
}

type printQueue struct {
	recs    []qrecord
	head    int // next record to print
	count   int // records queued
	dropped int // messages lost to a full queue since the last EmptyPrintQ
}

func (q *printQueue) init() { q.recs = make([]qrecord, qRecords) }

// Qprintf queues a printf to this PE's stdout (Strata's Qprintf) and
// returns the message's length. It formats at once into a fixed-size
// record without allocating: the verbs are %d %i %u %x %X %o %b %c %s %q %v
// %f %e %g %t and %% with flags -, 0, + and space, width and precision,
// over Go's integer, float, bool, string and []byte types. Other argument
// types print as %!v(type) — use StrataLog for those. When the queue is
// full the message is dropped and counted; EmptyPrintQ reports the loss.
func (s *S) Qprintf(format string, args ...any) int {
	return s.Qfprintf(s.stdout, format, args...)
}

// Qfprintf is Qprintf to w (Strata's Qfprintf).
func (s *S) Qfprintf(w io.Writer, format string, args ...any) int {
	old := s.enter(StateQprintf, 0, "")
	defer s.leave(old)
	q := &s.q
	if q.count == len(q.recs) {
		q.dropped++
		return 0
	}
	r := &q.recs[(q.head+q.count)%len(q.recs)]
	q.count++
	r.w = w
	b := fbuf{buf: r.buf[:]}
	b.printf(format, args)
	r.n = uint8(b.n)
	if s.logging&LogQprintf != 0 {
		s.StrataLog("Qprintf %q", r.buf[:r.n])
	}
	return b.n
}

// EmptyPrintQ writes the queued messages, oldest first, each with one
// Write, and returns how many there were (Strata's EmptyPrintQ).
func (s *S) EmptyPrintQ() int {
	old := s.enter(StateEmptyPrintQ, 0, "")
	defer s.leave(old)
	q := &s.q
	n := q.count
	for ; q.count > 0; q.count-- {
		r := &q.recs[q.head]
		r.w.Write(r.buf[:r.n])
		r.w = nil
		q.head = (q.head + 1) % len(q.recs)
	}
	if q.dropped > 0 {
		fmt.Fprintf(s.stdout, "strata: PE %d: Qprintf queue full: %d messages dropped (call EmptyPrintQ more often)\n", s.self, q.dropped)
		q.dropped = 0
	}
	return n
}

// fbuf is a bounded buffer: writes past its end are dropped and the end
// becomes "...".
type fbuf struct {
	buf  []byte
	n    int
	full bool
}

func (b *fbuf) write(p []byte) {
	for _, c := range p {
		b.byte(c)
	}
}

func (b *fbuf) str(p string) {
	for i := 0; i < len(p); i++ {
		b.byte(p[i])
	}
}

func (b *fbuf) byte(c byte) {
	if b.n < len(b.buf) {
		b.buf[b.n] = c
		b.n++
		return
	}
	if !b.full {
		b.full = true
		copy(b.buf[len(b.buf)-3:], "...")
	}
}

func (b *fbuf) pad(c byte, n int) {
	for ; n > 0; n-- {
		b.byte(c)
	}
}

// spec is one parsed conversion: flags, width, precision and verb.
type spec struct {
	minus, zero, plus, space bool
	width, prec              int
	verb                     byte
}

// field writes p padded to the spec's width.
func (b *fbuf) field(sp *spec, p []byte) {
	if sp.minus {
		b.write(p)
		b.pad(' ', sp.width-len(p))
		return
	}
	if sp.zero && len(p) > 0 && (p[0] == '-' || p[0] == '+' || p[0] == ' ') {
		b.byte(p[0])
		b.pad('0', sp.width-len(p))
		b.write(p[1:])
		return
	}
	c := byte(' ')
	if sp.zero {
		c = '0'
	}
	b.pad(c, sp.width-len(p))
	b.write(p)
}

// printf formats without allocating: the arguments are only inspected by
// type switch, so they do not escape and the caller's boxing stays on its
// stack.
func (b *fbuf) printf(format string, args []any) {
	arg := 0
	var tmp [qRecordLen]byte
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.byte(c)
			continue
		}
		sp := spec{prec: -1}
	flags:
		for i++; i < len(format); i++ {
			switch format[i] {
			case '-':
				sp.minus = true
			case '0':
				sp.zero = true
			case '+':
				sp.plus = true
			case ' ':
				sp.space = true
			default:
				break flags
			}
		}
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			sp.width = sp.width*10 + int(format[i]-'0')
		}
		if i < len(format) && format[i] == '.' {
			sp.prec = 0
			for i++; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				sp.prec = sp.prec*10 + int(format[i]-'0')
			}
		}
		// C length modifiers mean nothing in Go: skip them.
		for i < len(format) && (format[i] == 'l' || format[i] == 'h') {
			i++
		}
		if i >= len(format) {
			b.str("%!(NOVERB)")
			return
		}
		sp.verb = format[i]
		if sp.verb == '%' {
			b.byte('%')
			continue
		}
		if arg >= len(args) {
			b.str("%!")
			b.byte(sp.verb)
			b.str("(MISSING)")
			continue
		}
		b.field(&sp, appendArg(tmp[:0], &sp, args[arg]))
		arg++
	}
	if arg < len(args) {
		b.str("%!(EXTRA)")
	}
}

// appendArg formats one argument into dst (a small stack buffer).
func appendArg(dst []byte, sp *spec, a any) []byte {
	switch v := a.(type) {
	case int:
		return appendInt(dst, sp, int64(v))
	case int8:
		return appendInt(dst, sp, int64(v))
	case int16:
		return appendInt(dst, sp, int64(v))
	case int32:
		if sp.verb == 'c' {
			return appendRune(dst, v)
		}
		return appendInt(dst, sp, int64(v))
	case int64:
		return appendInt(dst, sp, v)
	case uint:
		return appendUint(dst, sp, uint64(v), false)
	case uint8:
		if sp.verb == 'c' {
			return append(dst, v)
		}
		return appendUint(dst, sp, uint64(v), false)
	case uint16:
		return appendUint(dst, sp, uint64(v), false)
	case uint32:
		return appendUint(dst, sp, uint64(v), false)
	case uint64:
		return appendUint(dst, sp, v, false)
	case uintptr:
		return appendUint(dst, sp, uint64(v), false)
	case float32:
		return appendFloat(dst, sp, float64(v), 32)
	case float64:
		return appendFloat(dst, sp, v, 64)
	case bool:
		return strconv.AppendBool(dst, v)
	case string:
		return appendString(dst, sp, v)
	case []byte:
		return appendString(dst, sp, string(v))
	}
	return append(dst, "%!v(unsupported type)"...)
}

func appendRune(dst []byte, r int32) []byte {
	if r < 0x80 && r >= 0 {
		return append(dst, byte(r))
	}
	return append(dst, '?')
}

func appendString(dst []byte, sp *spec, v string) []byte {
	if sp.prec >= 0 && sp.prec < len(v) {
		v = v[:sp.prec]
	}
	if sp.verb == 'q' {
		dst = append(dst, '"')
		n := min(len(v), cap(dst)-len(dst)-1)
		return append(append(dst, v[:n]...), '"')
	}
	n := min(len(v), cap(dst)-len(dst))
	return append(dst, v[:n]...)
}

func appendInt(dst []byte, sp *spec, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		return appendUint(dst, sp, uint64(-v), true)
	}
	return appendUint(dst, sp, uint64(v), false)
}

func appendUint(dst []byte, sp *spec, v uint64, neg bool) []byte {
	if !neg {
		if sp.plus {
			dst = append(dst, '+')
		} else if sp.space {
			dst = append(dst, ' ')
		}
	}
	switch sp.verb {
	case 'x', 'p':
		return strconv.AppendUint(dst, v, 16)
	case 'X':
		start := len(dst)
		dst = strconv.AppendUint(dst, v, 16)
		for i := start; i < len(dst); i++ {
			if dst[i] >= 'a' {
				dst[i] -= 'a' - 'A'
			}
		}
		return dst
	case 'o':
		return strconv.AppendUint(dst, v, 8)
	case 'b':
		return strconv.AppendUint(dst, v, 2)
	case 'c':
		return appendRune(dst, int32(v))
	case 'f', 'e', 'g':
		return appendFloat(dst, sp, float64(v), 64)
	}
	return strconv.AppendUint(dst, v, 10)
}

func appendFloat(dst []byte, sp *spec, v float64, bitSize int) []byte {
	verb := sp.verb
	switch verb {
	case 'f', 'e', 'g', 'E', 'G':
	default:
		verb = 'g'
	}
	if sp.plus && !math.Signbit(v) {
		dst = append(dst, '+')
	}
	prec := sp.prec
	if prec < 0 && verb != 'g' && verb != 'G' {
		prec = 6
	}
	if prec > 30 {
		prec = 30
	}
	if verb == 'f' && math.Abs(v) >= 1e20 {
		verb = 'e' // keep it within the stack buffer
	}
	return strconv.AppendFloat(dst, v, verb, prec, bitSize)
}
