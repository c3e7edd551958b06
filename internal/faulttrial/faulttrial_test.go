package faulttrial

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// reportOf is the report a survivor's spmd.Main writes for err: the tally
// is fed what real error values say, so that rewording a message in papers
// cannot change a count.
func reportOf(err error) *pereport.Report {
	r := pereport.From(err)
	r.Stage, r.Status = pereport.Run, 1
	return &r
}

// rollCall is the error of PE pe's barrier whose roll call found missing
// silent.
func rollCall(pe int, missing peset.Set) error {
	return &papers.TimeoutError{PE: pe, Op: "NAND", Waited: time.Second, RollCall: true, Missing: missing}
}

// TestTally: a survivor naming the victim is counted as such, a healthy PE
// it names (alone or beside the victim) as blamed, an exit 0 with a wrong
// sum as wrong; the worst time is the last survivor's end after the fault,
// and the worst in a PE its longest failing sum.
func TestTally(t *testing.T) {
	t0 := time.Now()
	var tl Tally
	tl.Add("SIGKILL", 4, t0, []Outcome{
		{Stdout: "ready\nfailed after 1.52s\n", Report: reportOf(rollCall(0, 1<<Victim)), Exit: 1, Ended: t0.Add(time.Second)},
		{Stdout: "ready\nfailed after 870ms\n", Report: reportOf(&papers.InterruptError{PE: 2, Op: "barrier", Code: 0xf, Left: 1 << Victim}), Exit: 1, Ended: t0.Add(3 * time.Second)},
		{Report: reportOf(rollCall(3, 1<<Victim|1<<2)), Exit: 1, Ended: t0.Add(2 * time.Second)},
	}, 0)
	census := &papers.AbsentError{PE: 3, Op: "reduce", Missing: 1 << Victim, Why: "participant", Proven: 4, Calls: 9}
	tl.Add("unplug", 4, t0, []Outcome{
		{Stdout: "ready\nsum=9\n", Exit: 0, Ended: t0},
		{Stdout: "ready\nsum=10\n", Exit: 0, Ended: t0},
		{Stdout: "ready\n", Report: reportOf(census), Exit: 1, Ended: t0},
	}, 1)
	want := Tally{Trials: 2, Named: 4, Wrong: 1, Hung: 1, Blamed: 1, ComputedWrong: 1, Worst: 3 * time.Second, WorstInPE: 1520 * time.Millisecond,
		Missed: []string{`exit 0: "no report"`, `exit 0: "no report"`}}
	if !reflect.DeepEqual(tl, want) {
		t.Errorf("tally %+v, want %+v", tl, want)
	}
	if p := tl.Problems("unplug", 4); len(p) != 4 || !strings.Contains(p[3], `did not name PE 1 said: exit 0: "no report"`) {
		t.Errorf("problems %q, want the wrong sum, the healthy PE named, the unplugged PE not named by all, and what those survivors said", p)
	}
}

// TestNames: which errors name the victim as the cause of which fault,
// each made as papers makes it and wrapped as a program's error would be.
func TestNames(t *testing.T) {
	d3, _ := lpt.LineFor(lpt.Data, lpt.D3)
	d2, _ := lpt.LineFor(lpt.Data, lpt.D2)
	returned := &papers.InterruptError{PE: 0, Op: "barrier", Code: papers.ReturnCode, Left: 1 << Victim, Returned: 1 << Victim}
	for _, c := range []struct {
		kind string
		err  error
		want bool
	}{
		{"return", returned, true},
		{"return", rollCall(0, 1<<Victim), false}, // a return is announced: silence is not its account
		{"SIGKILL", fmt.Errorf("step 3: %w", rollCall(0, 1<<Victim)), true},
		{"SIGKILL", rollCall(0, 1<<2), false},
		{"SIGKILL", &papers.TimeoutError{PE: 0, Op: "barrier", Waited: time.Second, RollCall: true, Missing: 1 << Victim,
			DataNet: []papers.Absence{{PE: Victim, How: papers.Died}}}, true},
		{"unplug", &papers.InterruptError{PE: 2, Op: "NAND", Code: 0xf, Left: 1 << Victim}, true},
		{"unplug", &papers.InterruptError{PE: 2, Op: "NAND", Code: 0xf, Left: 1<<0 | 1<<Victim}, true},
		{"unplug", &papers.InterruptError{PE: 2, Op: "NAND", Code: 0xf, Left: 1<<0 | 1<<3}, false},
		{"unplug", &papers.AbsentError{PE: 0, Op: "census", Missing: 1 << Victim, Why: "participant"}, true},
		{"stuck", &papers.LineError{PE: 0, Line: d3, Stuck: 0, Faulty: -1, Candidates: 0xf, Op: "check-in"}, true},
		{"stuck", &papers.LineError{PE: 0, Line: d2, Stuck: 0, Faulty: -1, Candidates: 0xf, Op: "check-in"}, false},
		{"SIGTERM", &papers.LineError{PE: 0, Line: d2, Stuck: 1, Faulty: Victim, Op: "proof"}, true},
		{"SIGTERM", papers.Errorf("splitc", 0, "get: %w", &am.GoneError{PE: Victim, Died: true}), true},
		{"SIGTERM", errors.New("injected error"), false},
	} {
		if got := Names(c.kind, reportOf(c.err)); got != c.want {
			t.Errorf("%s: Names(%v) = %v, want %v", c.kind, c.err, got, c.want)
		}
	}
	if Names("SIGKILL", nil) {
		t.Error("a survivor without a report is counted as naming the victim")
	}
}

// TestFromEnv: the trials' settings are checked before any trial.
func TestFromEnv(t *testing.T) {
	t.Setenv("PAPERS_FAULT_TRIALS", "3")
	t.Setenv("PAPERS_FAULT_KINDS", "SIGKILL,unplug")
	if n, kinds, err := FromEnv(); err != nil || n != 3 || len(kinds) != 2 {
		t.Errorf("FromEnv() = %d, %v, %v", n, kinds, err)
	}
	for _, bad := range [][2]string{{"PAPERS_FAULT_TRIALS", "0"}, {"PAPERS_FAULT_KINDS", "SIGKIL"}} {
		t.Run(bad[1], func(t *testing.T) {
			t.Setenv(bad[0], bad[1])
			if _, _, err := FromEnv(); err == nil {
				t.Errorf("%s=%s accepted", bad[0], bad[1])
			}
		})
	}
}

// TestNamesCheckIn: the report of check-in's error for each check-in
// fault names the victim as that fault, and the other faults' reports do
// not count for it.
func TestNamesCheckIn(t *testing.T) {
	nAck, _ := lpt.LineFor(lpt.Status, lpt.StatusAck)
	input := func(pe int, stuck uint8) error {
		return &papers.InputError{PE: pe, Faulty: peset.Of(Victim), Inputs: []papers.StuckInput{{PE: Victim, Line: nAck, Stuck: stuck}}}
	}
	said := map[string]error{
		"pes":    &papers.MismatchError{PE: 0, What: "PE count", Odd: peset.Of(Victim), Detail: "PE 1 was started for 2 PEs; PEs 0, 2, 3 for 4"},
		"tag":    &papers.MismatchError{PE: 0, What: "program", Odd: peset.Of(Victim), Detail: `PE 1 runs x.test, tag "stale"`},
		"dup":    &papers.MismatchError{PE: 2, What: "PE id", Odd: peset.Of(0), Detail: "PE id 0 was started twice"},
		"input0": input(3, 0),
		"input1": input(0, 1),
	}
	for kind := range said {
		for other, err := range said {
			if got := Names(kind, reportOf(err)); got != (kind == other) {
				t.Errorf("Names(%q, report of %v) = %v", kind, err, got)
			}
		}
		other := &papers.MismatchError{PE: 0, What: "PE count", Odd: peset.Of(3), Detail: "PE 3 was started for 2 PEs"}
		if kind != "dup" && Names(kind, reportOf(other)) {
			t.Errorf("Names(%q) counts another PE's count", kind)
		}
	}
}

// TestTallyTraced: a survivor that names another survivor as having left
// the group counts as naming the victim only when that survivor's own
// report names the victim (it found the fault first and failed at once).
func TestTallyTraced(t *testing.T) {
	t0 := time.Now()
	forged := papers.Errorf("splitc", 2, "store: %w", &am.GoneError{PE: Victim, Cause: errors.New("a frame failed authentication")})
	of := func(pe int, err error) *pereport.Report { // as spmd writes it: with its PE
		r := reportOf(err)
		r.PE = pe
		return r
	}
	left := func(pe int, who peset.Set) *pereport.Report {
		return of(pe, &papers.InterruptError{PE: pe, Op: "NAND", Code: 0xf, Left: who})
	}
	var tl Tally
	tl.Add("tamper", 4, t0, []Outcome{
		{Report: left(0, peset.Of(2)), Exit: 1, Ended: t0},
		{Report: of(2, forged), Exit: 1, Ended: t0},
		{Report: left(3, peset.Of(2)), Exit: 1, Ended: t0},
	}, 0)
	if tl.Named != 3 || tl.Traced != 2 || len(tl.Missed) != 0 {
		t.Errorf("traced through PE 2: %+v, want 3 named, 2 of them traced", tl)
	}
	tl = Tally{}
	tl.Add("tamper", 4, t0, []Outcome{
		{Report: left(0, peset.Of(2)), Exit: 1, Ended: t0},
		{Report: of(2, rollCall(2, peset.Of(3))), Exit: 1, Ended: t0}, // names PE 3, not the victim
		{Report: left(3, peset.Of(0)), Exit: 1, Ended: t0},            // PE 0 did not name the victim either
	}, 0)
	if tl.Named != 0 || tl.Traced != 0 {
		t.Errorf("no survivor named the victim, yet %+v", tl)
	}
}
