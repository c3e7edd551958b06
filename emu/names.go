package emu

import (
	"fmt"
	"strings"
)

// MaxNameLen is the longest board name.
const MaxNameLen = 64

// CheckName reports whether name is a plain board name: 1 to MaxNameLen
// letters, digits, '-', '_' and '.', not starting with '.', and without
// "..": a name can never leave the board directory or hide in it.
func CheckName(name string) error { return checkName(name, MaxNameLen) }

// CheckNameAfter reports whether name can follow prefix in a board file's
// name (a launcher's "papers-" and the user's name): name is a plain name,
// and the whole file name, prefix included, has at most MaxNameLen
// characters. The error speaks of name, the part the user chose.
func CheckNameAfter(prefix, name string) error { return checkName(name, MaxNameLen-len(prefix)) }

// NameError reports a board name that is not a plain name.
type NameError struct {
	Name   string
	Why    string // "is empty", "contains '/' (a name, not a path)", …
	MaxLen int
}

func (e *NameError) Error() string { return "emu: " + e.Problem() }

// Problem is the message without the package's prefix, for a caller that
// reports the name as its own setting ("--board: board name …").
func (e *NameError) Problem() string {
	return fmt.Sprintf("board name %q %s: use 1 to %d letters, digits, '-', '_' or '.', e.g. myjob-2", e.Name, e.Why, e.MaxLen)
}

func checkName(name string, maxLen int) error {
	bad := func(why string) error { return &NameError{Name: name, Why: why, MaxLen: maxLen} }
	switch {
	case name == "":
		return bad("is empty")
	case len(name) > maxLen:
		return bad(fmt.Sprintf("is too long (%d characters)", len(name)))
	case strings.Contains(name, "/"):
		return bad("contains '/' (a name, not a path)")
	case strings.Contains(name, ".."):
		return bad(`contains ".."`)
	case name[0] == '.':
		return bad("starts with '.'")
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return bad(fmt.Sprintf("contains %q", c))
		}
	}
	return nil
}
