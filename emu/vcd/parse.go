package vcd

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// File is a parsed VCD file.
type File struct {
	Timescale time.Duration // the time unit: 1ns, 10ps, ...
	Signals   []*Signal     // in declaration order; aliases are separate signals sharing changes
	End       int64         // the last time stamp
	byPath    map[string]*Signal
}

// Signal is one declared variable.
type Signal struct {
	Path  string // scopes and name joined by '.', escapes removed: "board.PE2.D6"
	Name  string // the name alone: "PE2.D6"
	Type  string // wire, reg, event, ...
	Width int
	// Changes are the values in time order. Scalars are "0", "1", "x" or
	// "z"; vectors are Width characters, most significant first; an event
	// is "1" at each time it fired.
	Changes []Change
	series  *[]Change
}

// Change is a value from time T on.
type Change struct {
	T int64
	V string
}

// Signal returns the signal with the given path, or nil.
func (f *File) Signal(path string) *Signal { return f.byPath[path] }

// At returns the signal's value at time t ("x" before its first change).
func (s *Signal) At(t int64) string {
	i := sort.Search(len(s.Changes), func(i int) bool { return s.Changes[i].T > t })
	if i == 0 {
		return "x"
	}
	return s.Changes[i-1].V
}

// Uint returns the value at time t as a number, and false when it has x or
// z bits.
func (s *Signal) Uint(t int64) (uint64, bool) {
	v, err := strconv.ParseUint(s.At(t), 2, 64)
	return v, err == nil
}

var (
	varTypes   = set("event integer parameter real realtime reg supply0 supply1 time tri triand trior trireg tri0 tri1 wand wire wor")
	scopeTypes = set("begin fork function module task")
	bitSelect  = regexp.MustCompile(`^\[(\d+)(?::(\d+))?\]$`)
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// parser holds the state of one Parse.
type parser struct {
	tok    *bufio.Scanner
	f      *File
	scopes []string
	codes  map[string]*code1
	now    int64
	timed  bool
}

type code1 struct {
	width  int
	series *[]Change
}

// Parse reads a VCD file, checking it against the grammar of IEEE
// 1364-2005 §18.2: declaration commands ($comment, $date, $version,
// $timescale, $scope, $upscope, $var) up to $enddefinitions, then
// simulation times, value changes and the $dump commands. Errors name the
// offending token.
func Parse(r io.Reader) (*File, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(bufio.ScanWords)
	p := &parser{tok: sc, f: &File{byPath: map[string]*Signal{}}, codes: map[string]*code1{}}
	if err := p.declarations(); err != nil {
		return nil, err
	}
	if err := p.simulation(); err != nil {
		return nil, err
	}
	return p.f, sc.Err()
}

func (p *parser) next() (string, bool) {
	if !p.tok.Scan() {
		return "", false
	}
	return p.tok.Text(), true
}

// body returns the tokens up to $end.
func (p *parser) body(cmd string) ([]string, error) {
	var toks []string
	for {
		t, ok := p.next()
		if !ok {
			return nil, fmt.Errorf("vcd: %s without $end", cmd)
		}
		if t == "$end" {
			return toks, nil
		}
		toks = append(toks, t)
	}
}

func (p *parser) declarations() error {
	seenScale := false
	for {
		cmd, ok := p.next()
		if !ok {
			return fmt.Errorf("vcd: no $enddefinitions")
		}
		args, err := p.body(cmd)
		if err != nil {
			return err
		}
		switch cmd {
		case "$comment", "$date", "$version":
		case "$timescale":
			if seenScale {
				return fmt.Errorf("vcd: $timescale given twice")
			}
			seenScale = true
			if p.f.Timescale, err = parseTimescale(args); err != nil {
				return err
			}
		case "$scope":
			if len(args) != 2 || !scopeTypes[args[0]] {
				return fmt.Errorf("vcd: $scope %s: want a scope type (module, task, function, begin, fork) and a name", strings.Join(args, " "))
			}
			p.scopes = append(p.scopes, unescape(args[1]))
		case "$upscope":
			if len(args) != 0 || len(p.scopes) == 0 {
				return fmt.Errorf("vcd: $upscope %s without an open scope", strings.Join(args, " "))
			}
			p.scopes = p.scopes[:len(p.scopes)-1]
		case "$var":
			if err := p.variable(args); err != nil {
				return err
			}
		case "$enddefinitions":
			if len(p.scopes) != 0 {
				return fmt.Errorf("vcd: $enddefinitions with scope %s still open", strings.Join(p.scopes, "."))
			}
			if !seenScale {
				p.f.Timescale = time.Second // the standard's default is tool-defined; say 1 s
			}
			return nil
		default:
			return fmt.Errorf("vcd: %q is not a declaration command", cmd)
		}
	}
}

func parseTimescale(args []string) (time.Duration, error) {
	s := strings.Join(args, "")
	units := []struct {
		name string
		d    time.Duration
	}{{"fs", 0}, {"ps", 0}, {"ns", time.Nanosecond}, {"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.name); ok && (num == "1" || num == "10" || num == "100") {
			n, _ := strconv.Atoi(num)
			if u.d == 0 {
				return 0, fmt.Errorf("vcd: timescale %s is finer than the nanoseconds this package counts in", s)
			}
			return time.Duration(n) * u.d, nil
		}
	}
	return 0, fmt.Errorf("vcd: timescale %q: want 1, 10 or 100 followed by s, ms, us, ns, ps or fs", s)
}

func (p *parser) variable(args []string) error {
	bad := func(why string) error {
		return fmt.Errorf("vcd: $var %s: %s", strings.Join(args, " "), why)
	}
	if len(args) != 4 && len(args) != 5 {
		return bad("want a type, a size, an identifier code and a reference")
	}
	if !varTypes[args[0]] {
		return bad("unknown variable type")
	}
	width, err := strconv.Atoi(args[1])
	if err != nil || width < 1 {
		return bad("the size is not a positive number")
	}
	ref := args[3]
	if i := strings.IndexByte(ref, '['); i > 0 && !strings.HasPrefix(ref, `\`) && len(args) == 4 {
		ref, args = ref[:i], append(args[:3:3], ref[:i], ref[i:]) // "accumulator[31:0]", as the standard's example writes it
	}
	if len(args) == 5 {
		m := bitSelect.FindStringSubmatch(args[4])
		if m == nil {
			return bad("the bit select is not [n] or [msb:lsb]")
		}
		if n := rangeWidth(m[1], m[2]); n != width {
			return bad(fmt.Sprintf("the bit select spans %d bits, the size says %d", n, width))
		}
	}
	name := unescape(ref)
	if name == "" || !strings.HasPrefix(ref, `\`) && !simpleIdentifier(ref) {
		return bad("the reference is not a Verilog identifier (escape other names with a backslash)")
	}
	c := p.codes[args[2]]
	if c == nil {
		c = &code1{width: width, series: new([]Change)}
		p.codes[args[2]] = c
	} else if c.width != width {
		return bad("an alias of a variable of another size")
	}
	s := &Signal{Path: strings.Join(append(append([]string(nil), p.scopes...), name), "."), Name: name, Type: args[0], Width: width, series: c.series}
	p.f.Signals = append(p.f.Signals, s)
	if _, dup := p.f.byPath[s.Path]; !dup {
		p.f.byPath[s.Path] = s
	}
	return nil
}

func rangeWidth(msb, lsb string) int {
	if lsb == "" {
		return 1
	}
	a, _ := strconv.Atoi(msb)
	b, _ := strconv.Atoi(lsb)
	if a < b {
		a, b = b, a
	}
	return a - b + 1
}

func unescape(s string) string { return strings.TrimPrefix(s, `\`) }

func (p *parser) simulation() error {
	for {
		t, ok := p.next()
		if !ok {
			break
		}
		var err error
		switch {
		case t == "$comment":
			_, err = p.body(t)
		case t == "$dumpvars" || t == "$dumpall" || t == "$dumpon" || t == "$dumpoff":
			err = p.dump(t)
		case t[0] == '#':
			err = p.time(t)
		case t[0] == '$':
			err = fmt.Errorf("vcd: %q after $enddefinitions: only $comment, $dumpvars, $dumpall, $dumpon and $dumpoff may follow", t)
		default:
			err = p.change(t)
		}
		if err != nil {
			return err
		}
	}
	for _, s := range p.f.Signals {
		s.Changes = *s.series
	}
	return nil
}

func (p *parser) time(t string) error {
	n, err := strconv.ParseInt(t[1:], 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("vcd: simulation time %q is not a decimal number", t)
	}
	if p.timed && n < p.now {
		return fmt.Errorf("vcd: simulation time #%d after #%d: time must not go back", n, p.now)
	}
	p.now, p.timed, p.f.End = n, true, n
	return nil
}

func (p *parser) dump(cmd string) error {
	for {
		t, ok := p.next()
		if !ok {
			return fmt.Errorf("vcd: %s without $end", cmd)
		}
		if t == "$end" {
			return nil
		}
		if err := p.change(t); err != nil {
			return err
		}
	}
}

// change reads one value change: a scalar value and its code in one token,
// or b/r with a value, then the code as the next token.
func (p *parser) change(t string) error {
	var val, id string
	switch c := t[0]; {
	case strings.IndexByte("01xXzZ", c) >= 0:
		val, id = strings.ToLower(t[:1]), t[1:]
	case c == 'b' || c == 'B' || c == 'r' || c == 'R':
		var ok bool
		if id, ok = p.next(); !ok {
			return fmt.Errorf("vcd: value change %q without an identifier code", t)
		}
		val = strings.ToLower(t[1:])
		if c == 'r' || c == 'R' {
			if _, err := strconv.ParseFloat(val, 64); err != nil {
				return fmt.Errorf("vcd: %q is not a real number", t)
			}
		} else if val == "" || strings.Trim(val, "01xz") != "" {
			return fmt.Errorf("vcd: %q is not a binary number", t)
		}
	default:
		return fmt.Errorf("vcd: %q is neither a time, a value change nor a command", t)
	}
	c := p.codes[id]
	switch {
	case id == "":
		return fmt.Errorf("vcd: value change %q without an identifier code", t)
	case c == nil:
		return fmt.Errorf("vcd: value change %q for undeclared identifier code %q", t, id)
	case !p.timed:
		return fmt.Errorf("vcd: value change %q before the first simulation time", t)
	case t[0] != 'r' && t[0] != 'R' && len(val) > c.width:
		return fmt.Errorf("vcd: value %q is wider than its variable's %d bits", val, c.width)
	}
	if t[0] != 'r' && t[0] != 'R' && len(val) < c.width {
		ext := "0"
		if val[0] == 'x' || val[0] == 'z' {
			ext = val[:1]
		}
		val = strings.Repeat(ext, c.width-len(val)) + val
	}
	s := c.series
	if n := len(*s); n > 0 && (*s)[n-1].T == p.now {
		(*s)[n-1].V = val
	} else {
		*s = append(*s, Change{p.now, val})
	}
	return nil
}
