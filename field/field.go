// Package field is how a configuration says what is wrong with it: every
// problem is an *Error naming the field it is about, and a configuration's
// Validate method joins them all (errors.Join), so that whoever fills the
// configuration in fixes them in one go.
//
// A message refers to fields by their Go names in braces, "{PEs}". Error
// writes them as the names themselves; a command-line tool that fills the
// configuration from flags writes them as its flags instead (Render), so
// the library never needs to know the flags' names:
//
//	PE 5: with PEs 4 the ids are 0 to 3          (Error)
//	--pe 5: with --pes 4 the ids are 0 to 3      (Render with --pe, --pes)
package field

import (
	"errors"
	"fmt"
	"strings"
)

// Error is one problem with one field of a configuration.
type Error struct {
	Field string // the field's Go name: "PEs"
	// format and args are Errorf's: "{Name}" in format stands for field
	// Name, and is written before the arguments are, so that braces in
	// the arguments (a path "./run{N}.sh") stay as they are.
	format string
	args   []any
	names  func(field string) string // set by Name; nil: the Go names
}

// Errorf returns an *Error about field name, its message formatted as by
// fmt.Sprintf.
func Errorf(name, format string, args ...any) *Error {
	return &Error{Field: name, format: format, args: args}
}

func (e *Error) Error() string { return e.Render(e.names) }

// Name makes every *Error in err's tree write its fields as name says, in
// Error() too, so that nothing reads or rewrites an error's text: an
// errors.Join of them (a Validate's result) then shows the new names. (A
// fmt.Errorf around one wrote its message when it was made, and keeps the
// Go names.) name returns "" for a field it does not know, which keeps
// the Go name.
func Name(err error, name func(field string) string) {
	for _, e := range Errors(err) {
		e.names = name
	}
}

// Render writes the message with each "{Name}" of the format written as
// name(Name); a nil name, or one that returns "", leaves the field's Go
// name.
func (e *Error) Render(name func(field string) string) string {
	var b strings.Builder
	s := e.format
	for {
		i := strings.IndexByte(s, '{')
		j := strings.IndexByte(s[i+1:], '}')
		if i < 0 || j < 0 {
			b.WriteString(s)
			break
		}
		f := s[i+1 : i+1+j]
		b.WriteString(s[:i])
		w := call(name, f)
		if w == "" {
			w = f
		}
		b.WriteString(strings.ReplaceAll(w, "%", "%%")) // a name is text, not a verb
		s = s[i+2+j:]
	}
	return fmt.Sprintf(b.String(), e.args...)
}

func call(name func(string) string, f string) string {
	if name == nil {
		return ""
	}
	return name(f)
}

// Errors returns every *Error in err's tree (errors.Join, wrapping), in
// order.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		default:
			walk(errors.Unwrap(err))
		}
	}
	walk(err)
	return out
}
