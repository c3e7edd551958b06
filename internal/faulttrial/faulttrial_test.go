package faulttrial

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTally: a survivor naming the victim is counted as such, one naming a
// healthy PE (alone or beside the victim) as blamed, an exit 0 with a wrong sum as wrong, and the worst
// time is the last survivor's end after the fault, and the worst in a PE
// its longest failing sum.
func TestTally(t *testing.T) {
	t0 := time.Now()
	var tl Tally
	tl.Add("SIGKILL", 4, t0, []Outcome{
		{Stdout: "ready\nfailed after 1.52s\n", Stderr: "papers: PE 0: NAND did not complete within 1s: PE 1 did not answer the roll call that followed", Exit: 1, Ended: t0.Add(time.Second)},
		{Stdout: "ready\nfailed after 870ms\n", Stderr: "papers: PE 2: barrier interrupted by a parallel interrupt with code 0xf; PE 1 left the group", Exit: 1, Ended: t0.Add(3 * time.Second)},
		{Stderr: "papers: PE 3: NAND did not complete within 1s: PEs 1, 2 did not answer the roll call that followed", Exit: 1, Ended: t0.Add(2 * time.Second)},
	}, 0)
	tl.Add("unplug", 4, t0, []Outcome{
		{Stdout: "ready\nsum=9\n", Exit: 0, Ended: t0},
		{Stdout: "ready\nsum=10\n", Exit: 0, Ended: t0},
		{Stdout: "ready\n", Stderr: "PE 1 did not answer the census of the participants", Exit: 1, Ended: t0},
	}, 1)
	want := Tally{Trials: 2, Named: 3, Wrong: 1, Hung: 1, Blamed: 1, ComputedWrong: 1, Worst: 3 * time.Second, WorstInPE: 1520 * time.Millisecond,
		Missed: []string{`exit 1: "papers: PE 3: NAND did not complete within 1s: PEs 1, 2 did not answer the roll call that followed"`, `exit 0: ""`, `exit 0: ""`}}
	if !reflect.DeepEqual(tl, want) {
		t.Errorf("tally %+v, want %+v", tl, want)
	}
	if p := tl.Problems("unplug", 4); len(p) != 4 || !strings.Contains(p[3], `did not name PE 1 said: exit 1: "papers: PE 3: NAND`) {
		t.Errorf("problems %q, want the wrong sum, the healthy PE named, the unplugged PE not named by all, and what those survivors said", p)
	}
}

// TestNamesReturn: an early return is named only as such, now that the PE
// announces it.
func TestNamesReturn(t *testing.T) {
	if !Names("return", "papers: PE 0: barrier: PE 1 returned from the program while the others went on") {
		t.Error("the announced return is not counted")
	}
	if Names("return", "papers: PE 0: NAND did not complete within 1s: PE 1 did not answer the roll call that followed") {
		t.Error("a roll call's silence is counted as naming a return")
	}
}

// TestNamesLeftTogether: an acknowledge that saw the victim leave beside
// another PE names it; one that saw others leave does not.
func TestNamesLeftTogether(t *testing.T) {
	for msg, want := range map[string]bool{
		"papers: PE 2: NAND interrupted by a parallel interrupt with code 0xf; PE 1 left the group":          true,
		"papers: PE 2: NAND interrupted by a parallel interrupt with code 0xf; PEs 0, 1 left the group":      true,
		"papers: PE 2: NAND interrupted by a parallel interrupt with code 0xf; PEs 0, 3 left the group":      false,
		"papers: PE 2: NAND interrupted by a parallel interrupt with code 0xf; PEs 0, 11, 12 left the group": false,
	} {
		if got := Names("unplug", msg); got != want {
			t.Errorf("Names(%q) = %v, want %v", msg, got, want)
		}
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

// TestNamesCheckIn: check-in's message for each check-in fault names the
// victim as check-in says it, and not the other faults' messages.
func TestNamesCheckIn(t *testing.T) {
	said := map[string]string{
		"pes":    "papers: PE 0: check-in: PE 1 was started for 2 PEs; PEs 0, 2, 3 for 4: start every PE with the same PE count",
		"tag":    `papers: PE 0: check-in: PE 1 runs x.test (sha256 1cee), tag "stale"; PEs 0, 2, 3 run x.test (sha256 1cee): run the same program`,
		"dup":    "papers: PE 2: check-in: PE id 0 was started twice: two PCs run with it",
		"input0": "papers: PE 3: check-in: PE 1's status input nAck (DB-25 pin 10) is stuck at 0: it reads bit 3 of every NAND as 0 whatever the board drives",
		"input1": "papers: PE 0: check-in: PE 1's status input nAck (DB-25 pin 10) is stuck at 1: it reads bit 3 of every NAND as 1 whatever the board drives",
	}
	for kind := range said {
		for other, m := range said {
			if got := Names(kind, m); got != (kind == other) {
				t.Errorf("Names(%q, %q) = %v", kind, m, got)
			}
		}
		if Names(kind, "papers: PE 0: check-in: PE 3 was started for 2 PEs; PEs 0, 1, 2 for 4") {
			t.Errorf("Names(%q) counts another PE's count", kind)
		}
	}
}
