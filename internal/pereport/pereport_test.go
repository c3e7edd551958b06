package pereport

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
)

// TestFrom: each error papers, am and splitc make is described by its value, found
// through whatever wraps it (a layer's PEError, a program's %w, a join of
// the end of a run), and any other error is of kind "error" naming no PE.
func TestFrom(t *testing.T) {
	d3, _ := lpt.LineFor(lpt.Data, lpt.D3)
	for _, c := range []struct {
		err  error
		want Report // Cause aside
	}{
		{&papers.TimeoutError{PE: 0, Op: "barrier", Waited: time.Second, RollCall: true, Missing: 1<<1 | 1<<3},
			Report{Kind: Timeout, PE: -1, Op: "barrier", Named: []int{1, 3}}},
		{&papers.TimeoutError{PE: 0, Op: "barrier", Waited: time.Second, RollCall: true},
			Report{Kind: Timeout, PE: -1, Op: "barrier"}},
		{fmt.Errorf("round 3: %w", &papers.InterruptError{PE: 2, Op: "NAND", Code: papers.ReturnCode, Left: 1<<1 | 1<<0, Returned: 1 << 1}),
			Report{Kind: Interrupt, PE: -1, Op: "NAND", Named: []int{0, 1}, Returned: []int{1}}},
		{errors.Join(&papers.AbsentError{PE: 0, Op: "end of the run", Missing: 1 << 2, Why: "participant", Calls: 5}, errors.New("close: done")),
			Report{Kind: Absent, PE: -1, Op: "end of the run", Named: []int{2}}},
		{&papers.LineError{PE: 0, Line: d3, Stuck: 1, Faulty: 2, Op: "check-in"},
			Report{Kind: Line, PE: -1, Op: "check-in", Named: []int{2}, Line: &LineInfo{Name: "D3", Pin: 5, Stuck: 1}}},
		{&papers.LineError{PE: 0, Line: d3, Stuck: 0, Faulty: -1, Candidates: 0b1011, Op: "check-in"},
			Report{Kind: Line, PE: -1, Op: "check-in", Line: &LineInfo{Name: "D3", Pin: 5, Candidates: []int{0, 1, 3}}}},
		{papers.Errorf("splitc", 0, "get from PE 3: %w", &am.GoneError{PE: 3, Died: true}),
			Report{Kind: Gone, PE: -1, Named: []int{3}}},
		{fmt.Errorf("round 7: %w", &splitc.LostError{PE: 0, Lost: 1 << 1, FoundBy: 1<<2 | 1<<3, Pending: 16, After: time.Millisecond}),
			Report{Kind: Lost, PE: -1, Op: "all_store_sync", Named: []int{1}}},
		{errors.New("injected error"), Report{Kind: Other, PE: -1}},
	} {
		got := From(c.err)
		if got.Cause != c.err.Error() {
			t.Errorf("%v: cause %q", c.err, got.Cause)
		}
		got.Cause = ""
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("From(%v) = %+v, want %+v", c.err, got, c.want)
		}
	}
}

// TestWriteRead: a report written where Env says reads back whole; no
// file reads as no report; without Env nothing is written.
func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pe1.json")
	if r, err := Read(path); r != nil || err != nil {
		t.Errorf("Read of no report = %+v, %v", r, err)
	}
	t.Setenv(Env, "")
	if err := Write(Report{Kind: Other}); err != nil {
		t.Errorf("Write without %s: %v", Env, err)
	}
	t.Setenv(Env, path)
	want := From(papers.NamePE(1, &papers.TimeoutError{PE: 1, Op: "reduce", Waited: time.Second, RollCall: true, Missing: 1 << 2}))
	want.Stage, want.Status, want.PE = Run, 1, 1
	if err := Write(want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("Read = %+v, %v; want %+v", got, err, want)
	}
	if !got.Names(2) || got.Names(1) || got.What() != "timeout in reduce" {
		t.Errorf("%+v: Names(2) %v, Names(1) %v, What %q", got, got.Names(2), got.Names(1), got.What())
	}
	if _, err := Parse([]byte("status=1")); err == nil {
		t.Error("Parse took a line that is not a report")
	}
}
