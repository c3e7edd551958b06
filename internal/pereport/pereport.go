// Package pereport is a failing PE's error as data, beside its text: what
// failed, when, on which PE, in which operation, the PEs and the line it
// names, and the text for people. A PE that spmd.Main runs writes one
// Report to the file its launcher names in Env; the launchers (papersctl
// run, hil) and the fault trials read it, never the PE's output. A report
// is made from the error values (errors.As), never from their text, so
// rewording a message changes what people read and nothing else.
package pereport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// Env names the file a PE writes its report to when it fails (one file a
// PE, which the launcher makes room for and reads after the PE's exit).
// Unset, a PE writes none.
const Env = "PAPERS_REPORT"

// Kind says what failed: the type of the error, or how the PE ended.
type Kind string

const (
	Timeout   Kind = "timeout"   // *papers.TimeoutError: a wait ran out
	Interrupt Kind = "interrupt" // *papers.InterruptError: PEs left or joined the group
	Absent    Kind = "absent"    // *papers.AbsentError: a PE a collective needed takes no part
	Line      Kind = "line"      // *papers.LineError: a data line is stuck or open
	Gone      Kind = "gone"      // a PE left the data network (am's GoneError)
	Lost      Kind = "lost"      // a wait on the data network ended early: PEs it knew gone (splitc.LostError)
	Mismatch  Kind = "mismatch"  // *papers.MismatchError: PEs checked in with different PE counts, programs or tags, or one id twice
	Input     Kind = "input"     // *papers.InputError: a PE's own status input is stuck
	Panic     Kind = "panic"     // the program panicked
	Signal    Kind = "signal"    // the PE was stopped by a signal
	Other     Kind = "error"     // any other error
)

// Stage says when the PE failed.
type Stage string

const (
	Setup Stage = "setup" // its command line or environment was refused: nothing started
	Open  Stage = "open"  // opening its port and checking in with the others
	Run   Stage = "run"   // the program
	End   Stage = "end"   // the end of the run: the PEs' last barrier and its proof
)

// Report is one failing PE's account.
type Report struct {
	Stage  Stage  `json:"stage"`
	Kind   Kind   `json:"kind"`
	Status int    `json:"status"` // the PE's exit status
	PE     int    `json:"pe"`     // the PE that failed; -1 when it had no id yet
	Op     string `json:"op,omitempty"`
	// Named are the PEs the error names as the cause: those a timeout's
	// roll call, a census or the data network found missing, those that
	// left with an interrupt, the PE whose data line is broken, the PE
	// gone from the data network, the PEs whose identity differs from the
	// most's (the id started twice), the PEs whose status input is stuck.
	Named []int `json:"named,omitempty"`
	// Returned are the PEs of Named whose program returned while the
	// others went on (an interrupt's).
	Returned []int     `json:"returned,omitempty"`
	Line     *LineInfo `json:"line,omitempty"`
	// Differs is what a mismatch found different: "PE count", "program"
	// or "PE id" (papers.MismatchError.What).
	Differs string `json:"differs,omitempty"`
	Cause   string `json:"cause"` // the error's text, for people
}

// LineInfo is the data line a *papers.LineError found broken, or the
// status input a *papers.InputError found stuck.
type LineInfo struct {
	Name  string `json:"name"` // "D3"
	Pin   int    `json:"pin"`  // its DB-25 pin
	Stuck uint8  `json:"stuck"`
	// Candidates are the PEs whose cable it may be, when the board cannot
	// tell (Named is then empty).
	Candidates []int `json:"candidates,omitempty"`
}

// From describes err: its kind and what its value says. The caller sets
// Stage, Status and PE, which the error need not know.
func From(err error) Report {
	r := Report{Kind: Other, PE: -1, Cause: err.Error()}
	var (
		le *papers.LineError
		ae *papers.AbsentError
		ie *papers.InterruptError
		te *papers.TimeoutError
		me *papers.MismatchError
		pe *papers.InputError
		// am's GoneError, which this package, below am, knows by its
		// account of the absent PE.
		ge interface{ Absence() papers.Absence }
		// splitc's LostError, known by its operation and the PEs it
		// names.
		lo interface{ LostPEs() (string, peset.Set) }
	)
	switch {
	case errors.As(err, &le):
		r.Kind, r.Op = Line, le.Op
		r.Line = &LineInfo{Name: le.Line.Name, Pin: le.Line.Pin, Stuck: le.Stuck}
		if le.Faulty >= 0 {
			r.Named = []int{le.Faulty}
		} else {
			r.Line.Candidates = members(le.Candidates)
		}
	case errors.As(err, &ae):
		r.Kind, r.Op, r.Named = Absent, ae.Op, members(ae.Missing)
	case errors.As(err, &ie):
		r.Kind, r.Op, r.Named, r.Returned = Interrupt, ie.Op, members(ie.Left), members(ie.Returned)
	case errors.As(err, &te):
		r.Kind, r.Op, r.Named = Timeout, te.Op, members(te.Missing)
	case errors.As(err, &me):
		r.Kind, r.Op, r.Named, r.Differs = Mismatch, "check-in", members(me.Odd), me.What
	case errors.As(err, &pe):
		r.Kind, r.Op, r.Named = Input, "check-in", members(pe.Faulty)
		if len(pe.Inputs) > 0 {
			in := pe.Inputs[0]
			r.Line = &LineInfo{Name: in.Line.Name, Pin: in.Line.Pin, Stuck: in.Stuck}
		}
	case errors.As(err, &lo):
		var lost peset.Set
		r.Op, lost = lo.LostPEs()
		r.Kind, r.Named = Lost, members(lost)
	case errors.As(err, &ge):
		r.Kind, r.Named = Gone, []int{ge.Absence().PE}
	}
	return r
}

// members lists a set of PEs, lowest first; nil when empty.
func members(s peset.Set) []int {
	if s == 0 {
		return nil
	}
	return s.Members()
}

// What is the kind and the operation, for a message: "timeout in
// barrier".
func (r *Report) What() string {
	if r.Op == "" {
		return string(r.Kind)
	}
	return string(r.Kind) + " in " + r.Op
}

// Names reports whether the report names PE pe as a cause.
func (r *Report) Names(pe int) bool {
	for _, k := range r.Named {
		if k == pe {
			return true
		}
	}
	return false
}

// Write writes r to the file Env names, if it names one.
func Write(r Report) error {
	path := os.Getenv(Env)
	if path == "" {
		return nil
	}
	js, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, js, 0o644)
}

// Read reads the report at path: nil, and no error, when there is none
// (the PE did not fail, or was killed before it could say).
func Read(path string) (*Report, error) {
	js, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(js)
}

// Parse reads a report written by Write (or carried on by a launcher).
func Parse(js []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(js, &r); err != nil {
		return nil, fmt.Errorf("pereport: a PE's report: %w", err)
	}
	return &r, nil
}
