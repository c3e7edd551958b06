package base

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// FlagSet is one command's flags. Each helper defines a flag whose value is
// checked as it is read, with a message that names the flag, the value and
// the fix ("--pes 0: need 1 to 32"). Flags are written --name or -name,
// --name=value or --name value, as with package flag.
type FlagSet struct {
	fs *flag.FlagSet
}

// value is every flag's flag.Value: a setter that checks, and what the
// help and the shell completion need to know.
type value struct {
	set     func(string) error
	get     func() string
	typ     string   // the value's name in -h: "N", "duration", "DIR"
	choices []string // the values allowed, when fixed
	files   string   // "file" or "dir" when the value names one (completion)
	hidden  bool     // internal: left out of -h and completion
	quotes  bool     // its check's errors quote the value (NamesValue)
}

func (v *value) String() string {
	if v == nil || v.get == nil {
		return ""
	}
	return v.get()
}
func (v *value) Set(s string) error { return v.set(s) }

// boolValue is a flag that takes no value (--json).
type boolValue struct{ *value }

func (boolValue) IsBoolFlag() bool { return true }

// ErrHelp is -h or --help.
var ErrHelp = flag.ErrHelp

func NewFlagSet(path string) *FlagSet {
	// The flag.FlagSet only holds the flags: parse reads the command
	// line, so package flag never prints or exits.
	return &FlagSet{fs: flag.NewFlagSet(path, flag.ContinueOnError)}
}

// add defines a flag.
func (f *FlagSet) add(name, usage string, v *value) {
	var fv flag.Value = v
	if v.typ == "" {
		fv = boolValue{v}
	}
	f.fs.Var(fv, name, usage)
}

// Shown is s as a message shows it: quoted when it is empty or has spaces
// or characters that would break the line.
func Shown(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) {
		return strconv.Quote(s)
	}
	return s
}

// Dashed writes a flag as users type it: one-letter flags and mpirun's -np
// with one dash, the long names with two.
func Dashed(name string) string {
	if len(name) == 1 || name == "np" {
		return Shown("-" + name)
	}
	return Shown("--" + name)
}

// Int defines an integer flag that must lie in lo..hi.
func (f *FlagSet) Int(p *int, name string, def, lo, hi int, usage string) {
	*p = def
	f.add(name, fmt.Sprintf("%s, %d to %d", usage, lo, hi), &value{typ: "N",
		get: func() string { return strconv.Itoa(*p) },
		set: func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil {
				return fmt.Errorf("not a whole number: need %d to %d", lo, hi)
			}
			if n < lo || n > hi {
				return fmt.Errorf("need %d to %d", lo, hi)
			}
			*p = n
			return nil
		}})
}

// Duration defines a duration flag that must be positive. With zeroOK, 0
// is allowed too (it means the default the usage names).
func (f *FlagSet) Duration(p *time.Duration, name string, def time.Duration, zeroOK bool, usage string) {
	*p = def
	f.add(name, usage, &value{typ: "duration",
		get: func() string { return p.String() },
		set: func(s string) error {
			d, err := time.ParseDuration(s)
			if err != nil {
				return errors.New("not a duration: write e.g. 500ms, 10s or 2m")
			}
			if d < 0 || d == 0 && !zeroOK {
				if zeroOK {
					return errors.New("need a duration of 0 (the default) or more")
				}
				return errors.New("need a positive duration, e.g. 10s")
			}
			*p = d
			return nil
		}})
}

// Float defines a number flag that must be above 0 and at most hi (which
// may be +Inf).
func (f *FlagSet) Float(p *float64, name string, def, hi float64, usage string) {
	*p = def
	want := "need a number above 0"
	if !math.IsInf(hi, 1) {
		want += " and at most " + strconv.FormatFloat(hi, 'g', -1, 64)
	}
	f.add(name, usage, &value{typ: "number",
		get: func() string { return strconv.FormatFloat(*p, 'g', -1, 64) },
		set: func(s string) error {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(x) {
				return errors.New("not a number: " + want)
			}
			if x <= 0 || x > hi {
				return errors.New(want)
			}
			*p = x
			return nil
		}})
}

// Choice defines a flag whose value is one of choices ("" is allowed when
// it is the default: not given).
func (f *FlagSet) Choice(p *string, name, def string, choices []string, usage string) {
	*p = def
	f.add(name, usage+" ("+strings.Join(choices, ", ")+")", &value{typ: "word", choices: choices,
		get: func() string { return *p },
		set: func(s string) error {
			if !slices.Contains(choices, s) {
				return fmt.Errorf("want one of %s%s", strings.Join(choices, ", "), Suggest(s, choices, ""))
			}
			*p = s
			return nil
		}})
}

// String defines a flag whose value check (when not nil) checks.
func (f *FlagSet) String(p *string, name, def, typ string, check func(string) error, usage string) {
	*p = def
	f.add(name, usage, &value{typ: typ,
		get: func() string { return *p },
		set: func(s string) error {
			if check != nil {
				if err := check(s); err != nil {
					return err
				}
			}
			*p = s
			return nil
		}})
}

// Parsed defines a flag whose value parse turns into a T once, as it is
// read: the command keeps the T, not the text to parse again. def is the
// default as written (shown by -h), and must parse.
func Parsed[T any](f *FlagSet, p *T, name, def, typ string, parse func(string) (T, error), usage string) {
	v, err := parse(def)
	if err != nil {
		panic("papersctl: flag " + name + "'s default " + def + ": " + err.Error())
	}
	*p = v
	shown := def
	f.add(name, usage, &value{typ: typ,
		get: func() string { return shown },
		set: func(s string) error {
			v, err := parse(s)
			if err != nil {
				return err
			}
			*p, shown = v, s
			return nil
		}})
}

// Path defines a flag naming a file (kind "file") or directory ("dir").
// mustExist refuses a path that is not there, or not of that kind.
func (f *FlagSet) Path(p *string, name, def, kind string, mustExist bool, usage string) {
	*p = def
	f.add(name, usage, &value{typ: strings.ToUpper(kind), files: kind,
		get: func() string { return *p },
		set: func(s string) error {
			if s == "" {
				return fmt.Errorf("empty: give a %s", kind)
			}
			if mustExist {
				if err := checkPath(s, kind); err != nil {
					return err
				}
			}
			*p = s
			return nil
		}})
}

// checkPath says whether path exists and is a directory (kind "dir") or a
// file.
func checkPath(path, kind string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil && kind == "dir":
		return errors.New("no such directory")
	case err != nil:
		return errors.New("no such file")
	case kind == "dir" && !st.IsDir():
		return errors.New("not a directory")
	case kind == "file" && st.IsDir():
		return errors.New("a directory, not a file")
	}
	return nil
}

// Bool defines a flag that is set by being given (--json).
func (f *FlagSet) Bool(p *bool, name string, usage string) {
	f.add(name, usage, &value{
		get: func() string { return strconv.FormatBool(*p) },
		set: func(s string) error {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return errors.New("want true or false (or give the flag alone)")
			}
			*p = b
			return nil
		}})
}

// Func defines a flag that set reads, every time it is given (--inject).
func (f *FlagSet) Func(name, typ string, set func(string) error, usage string) {
	f.add(name, usage, &value{typ: typ, get: func() string { return "" }, set: set})
}

// Hide leaves a flag out of -h and the shell completion (internal flags).
func (f *FlagSet) Hide(name string) { f.lookup(name).hidden = true }

// NamesValue says that the flag's check quotes in its errors what it
// refuses — the value, or the item of a list or the part of a spec that is
// wrong (`port base "zzz": ...`) — so that the flag's message does not
// show the value again: "--name: why" instead of "--name value: why".
func (f *FlagSet) NamesValue(name string) { f.lookup(name).quotes = true }

func (f *FlagSet) lookup(name string) *value {
	switch v := f.fs.Lookup(name).Value.(type) {
	case *value:
		return v
	case boolValue:
		return v.value
	}
	panic("papersctl: flag " + name + " not defined with a flagSet helper")
}

// Has reports whether the command defines the flag.
func (f *FlagSet) Has(name string) bool { return f.fs.Lookup(name) != nil }

// IsSet reports whether the command line gave the flag.
func (f *FlagSet) IsSet(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

func (f *FlagSet) count() int {
	n := 0
	f.fs.VisitAll(func(fl *flag.Flag) {
		if !f.lookup(fl.Name).hidden {
			n++
		}
	})
	return n
}

// FlagProblem is what is wrong with one flag of a command line.
type FlagProblem int

const (
	UnknownFlag  FlagProblem = iota + 1 // the command has no flag of that name
	MissingValue                        // the flag takes a value and none follows
	BadValue                            // the flag's own check refused the value
	BadSyntax                           // not the form of a flag: ---x, -=x
)

// A FlagError is a usage error about one flag, found by the flag set's own
// lookups (not read from package flag's messages).
type FlagError struct {
	Flag    string // the name as given, without dashes; BadSyntax: the word
	Problem FlagProblem
	Value   string // BadValue: the value refused
	Err     error  // BadValue: why
	hint    string // UnknownFlag: a suggestion; MissingValue: the value's form
	quoted  bool   // BadValue: Err quotes Value (NamesValue)
}

func (e *FlagError) Error() string {
	switch e.Problem {
	case UnknownFlag:
		return Dashed(e.Flag) + ": no such flag" + e.hint
	case MissingValue:
		return fmt.Sprintf("%s: needs a value (%s %s)", Dashed(e.Flag), Dashed(e.Flag), e.hint)
	case BadSyntax:
		return Shown(e.Flag) + ": bad flag syntax: write --name or --name=value"
	}
	if e.quoted {
		return fmt.Sprintf("%s: %v", Dashed(e.Flag), e.Err)
	}
	return fmt.Sprintf("%s %s: %v", Dashed(e.Flag), Shown(e.Value), e.Err)
}

func (e *FlagError) Unwrap() error { return e.Err }

// parse reads the flags and returns the words after them, as package flag
// would (-name or --name, =value or the next word, "--" ends the flags),
// but looking each name up itself, so that its errors are *FlagError
// values; or ErrHelp for -h and --help.
func (f *FlagSet) parse(args []string) ([]string, error) {
	for len(args) > 0 {
		s := args[0]
		if len(s) < 2 || s[0] != '-' {
			break
		}
		args = args[1:]
		name := s[1:]
		if name == "-" { // "--": the words after it are positional
			break
		}
		name = strings.TrimPrefix(name, "-")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return nil, &FlagError{Flag: s, Problem: BadSyntax}
		}
		name, value, hasValue := strings.Cut(name, "=")
		switch {
		case !f.Has(name) && (name == "h" || name == "help"):
			return nil, ErrHelp
		case !f.Has(name):
			var known []string
			f.fs.VisitAll(func(fl *flag.Flag) { known = append(known, fl.Name) })
			return nil, &FlagError{Flag: name, Problem: UnknownFlag, hint: didYouMean(closest(name, known), Dashed)}
		case !hasValue && f.lookup(name).typ == "": // a flag that takes no value
			value, hasValue = "true", true
		case !hasValue && len(args) > 0:
			value, hasValue, args = args[0], true, args[1:]
		}
		if !hasValue {
			return nil, &FlagError{Flag: name, Problem: MissingValue, hint: f.lookup(name).typ}
		}
		if err := f.fs.Set(name, value); err != nil {
			return nil, &FlagError{Flag: name, Problem: BadValue, Value: value, Err: err, quoted: f.lookup(name).quotes}
		}
	}
	return args, nil
}

// printDefaults lists the flags for -h.
func (f *FlagSet) printDefaults(w io.Writer) {
	f.fs.VisitAll(func(fl *flag.Flag) {
		v := f.lookup(fl.Name)
		if v.hidden {
			return
		}
		fmt.Fprintf(w, "  %s", Dashed(fl.Name))
		if v.typ != "" {
			fmt.Fprintf(w, " %s", v.typ)
		}
		fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(fl.Usage, "\n", "\n    \t"))
		if d := fl.DefValue; d != "" && d != "0" && d != "false" && d != "0s" {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// Suggest returns " (did you mean X?)" when one of known is close to s,
// X written with prefix.
func Suggest(s string, known []string, prefix string) string {
	return didYouMean(closest(s, known), func(w string) string { return prefix + w })
}

// closest returns the word of known within two edits of s (and fewer than
// s has letters), or "".
func closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := distance(strings.ToLower(s), strings.ToLower(k)); d < bestD && d < len(s) {
			best, bestD = k, d
		}
	}
	return best
}

func didYouMean(w string, write func(string) string) string {
	if w == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", write(w))
}

// distance is the edit distance between a and b (insertions, deletions,
// substitutions), for suggestions.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
