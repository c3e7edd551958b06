package kicad

import (
	"fmt"
	"strconv"
	"strings"
)

// Expr is one S-expression: an atom (a symbol, number or quoted string) or
// a list.
type Expr struct {
	Atom   string
	Quoted bool // the atom was a quoted string
	List   []*Expr
	IsList bool
}

// Head is the first atom of a list: its keyword. The methods of Expr
// accept a nil *Expr (a Child that is not there) and return nothing, so a
// reader of a damaged file gets empty values, never a panic.
func (e *Expr) Head() string {
	if e == nil || !e.IsList || len(e.List) == 0 {
		return ""
	}
	return e.List[0].Atom
}

// Arg returns the i-th atom after the keyword, or "".
func (e *Expr) Arg(i int) string {
	if e == nil || !e.IsList || i < 0 || i+1 >= len(e.List) {
		return ""
	}
	return e.List[i+1].Atom
}

// Child returns the first sub-list with the given keyword, or nil.
func (e *Expr) Child(head string) *Expr {
	if e == nil {
		return nil
	}
	for _, c := range e.List {
		if c.Head() == head {
			return c
		}
	}
	return nil
}

// Children returns every sub-list with the given keyword.
func (e *Expr) Children(head string) []*Expr {
	if e == nil {
		return nil
	}
	var out []*Expr
	for _, c := range e.List {
		if c.Head() == head {
			out = append(out, c)
		}
	}
	return out
}

// ParseExpr reads one S-expression (a KiCad file).
func ParseExpr(src string) (*Expr, error) {
	p := &parser{src: src}
	p.space()
	e, err := p.expr()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.src) {
		return nil, p.errorf("trailing text after the top-level expression")
	}
	return e, nil
}

type parser struct {
	src   string
	pos   int
	depth int // lists open
}

// maxDepth bounds the nesting of lists: KiCad's files nest about ten deep,
// and a file nested without end must not exhaust the stack.
const maxDepth = 1000

func (p *parser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.src[:p.pos], "\n")
	return fmt.Errorf("kicad: line %d: %s", line, fmt.Sprintf(format, args...))
}

func (p *parser) space() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *parser) expr() (*Expr, error) {
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of file")
	}
	switch c := p.src[p.pos]; c {
	case '(':
		if p.depth++; p.depth > maxDepth {
			return nil, p.errorf("lists nested deeper than %d", maxDepth)
		}
		defer func() { p.depth-- }()
		p.pos++
		e := &Expr{IsList: true}
		for {
			p.space()
			if p.pos >= len(p.src) {
				return nil, p.errorf("unclosed list")
			}
			if p.src[p.pos] == ')' {
				p.pos++
				return e, nil
			}
			sub, err := p.expr()
			if err != nil {
				return nil, err
			}
			e.List = append(e.List, sub)
		}
	case ')':
		return nil, p.errorf("unexpected )")
	case '"':
		p.pos++
		var b strings.Builder
		for p.pos < len(p.src) && p.src[p.pos] != '"' {
			if p.src[p.pos] == '\\' && p.pos+1 < len(p.src) {
				p.pos++
				switch p.src[p.pos] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(p.src[p.pos])
				}
			} else {
				b.WriteByte(p.src[p.pos])
			}
			p.pos++
		}
		if p.pos >= len(p.src) {
			return nil, p.errorf("unterminated string")
		}
		p.pos++
		return &Expr{Atom: b.String(), Quoted: true}, nil
	default:
		start := p.pos
		for p.pos < len(p.src) && strings.IndexByte(" \t\r\n()", p.src[p.pos]) < 0 {
			p.pos++
		}
		return &Expr{Atom: p.src[start:p.pos]}, nil
	}
}

// quote renders s as a KiCad quoted string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// coord is a length in hundredths of a millimetre, so that positions on
// KiCad's 1.27 mm grid are exact.
type coord int

const (
	grid coord = 127 // 1.27 mm (50 mil)
	pin  coord = 254 // 2.54 mm: pin pitch and pin length
)

func (c coord) String() string {
	s := strconv.FormatFloat(float64(c)/100, 'f', -1, 64)
	return s
}

// mm parses a KiCad length into hundredths of a millimetre.
func mm(s string) (coord, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("kicad: bad length %q", s)
	}
	if f < 0 {
		return coord(f*100 - 0.5), nil
	}
	return coord(f*100 + 0.5), nil
}
