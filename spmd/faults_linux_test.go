package spmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/internal/faulttrial"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// TestFaultTrials runs every fault on a board served as ppdev files over
// FUSE (the path real ports take), one process per PE, then after each one
// the next run on the same board — its PEs started together or one by one —
// and checks that it works. It counts, per fault, the survivors that named
// the victim, any exit 0 with a wrong sum, and the worst time from the
// fault to the last survivor's exit. CI runs one trial of each (a long
// test: TTLPAPERS_LONG_TESTS=1); the full
// run (docs/spmd.md, "Faults on a real board"):
//
//	TTLPAPERS_LONG_TESTS=1 PAPERS_FAULT_TRIALS=20 go test ./spmd -run TestFaultTrials -v -timeout 60m
func TestFaultTrials(t *testing.T) {
	testenv.Long(t, "a trial of every fault on processes over FUSE")
	trials, kinds, err := faulttrial.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !faulttrial.KindsChosen() {
		kinds = slices.Concat(kinds, faulttrial.CheckInKinds, faulttrial.ProofKinds)
	}
	faultTrials(t, 4, trials, kinds)
}

// TestFaultTrialsEightPEs is TestFaultTrials' killed and stopped PE on an
// 8-PE board, where PEs share the roll call's data lines (PE 1's line D1
// is PE 5's too), so the board cannot name the victim: the data network
// (TCP, as on a real board) must, on every survivor; and the check-in
// faults, which check-in must name with shared lines too
// (PAPERS_FAULT_KINDS chooses others).
func TestFaultTrialsEightPEs(t *testing.T) {
	testenv.Long(t, "fault trials on 8 processes over FUSE")
	trials, kinds, err := faulttrial.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !faulttrial.KindsChosen() {
		kinds = slices.Concat([]string{"SIGKILL", "SIGSTOP"}, faulttrial.CheckInKinds, faulttrial.ProofKinds)
	}
	faultTrials(t, 8, trials, kinds)
}

// faultTrials runs the trials of kinds on an n-PE board and checks and
// logs what they found.
func faultTrials(t *testing.T, n, trials int, kinds []string) {
	const timeout = time.Second
	board, srv := serveBoard(t, n)
	// Every trial starts from a board an earlier run has used, as a
	// cluster's is: at power-on every port holds the board until its PE
	// comes, so no check-in vote could count a PE before the last came.
	if ok, why := nextRun(t, srv, n, timeout, false); !ok {
		t.Fatalf("a run on the fresh board failed: %s", why)
	}
	tallies := map[string]*faulttrial.Tally{}
	for _, kind := range kinds {
		tl := &faulttrial.Tally{}
		tallies[kind] = tl
		for trial := range trials {
			faultTrial(t, board, srv, kind, timeout, tl)
			if ok, why := nextRun(t, srv, n, timeout, trial%2 == 1); ok {
				tl.NextOK++
			} else {
				t.Errorf("%s, trial %d: the next run failed: %s", kind, trial, why)
			}
		}
		t.Logf("%s done: %+v", kind, *tl)
	}
	t.Logf("%d PEs on ppdev over FUSE, PAPERS_TIMEOUT=%v, victim PE %d, %d trials each:", n, timeout, faulttrial.Victim, trials)
	faulttrial.Table(t.Logf, n, kinds, tallies)
	for _, kind := range kinds {
		for _, p := range tallies[kind].Problems(kind, n) {
			t.Error(p)
		}
	}
}

// peRun is one PE process of a trial.
type peRun struct {
	faulttrial.Proc
	stdout testenv.Buffer // read while the process writes it (waitReady)
	stderr strings.Builder
	report string // where it writes its failure's report (pereport.Env)
}

// startRun starts n PE processes of faultProgram with fault kind ("" for
// none), the k-th after k*stagger, and returns once all have started. For
// a fault during check-in (faulttrial.DuringCheckIn) the last PE starts
// only once the others wait for it at check-in and the victim has had its
// signal.
func startRun(ctx context.Context, t *testing.T, srv *ppdevfs.Server, n int, kind string, timeout, stagger time.Duration) []*peRun {
	t.Helper()
	sig, during := faulttrial.DuringCheckIn[kind]
	runs := make([]*peRun, n)
	for k := range n {
		if k > 0 {
			time.Sleep(stagger)
		}
		if during && k == n-1 {
			time.Sleep(2 * time.Second) // the others have checked in together, a busy machine too
			runs[faulttrial.Victim].Cmd.Process.Signal(sig)
		}
		r := &peRun{Proc: faulttrial.Proc{Exit: -1}, report: filepath.Join(t.TempDir(), "report.json")}
		r.Cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		r.Cmd.Env = append(os.Environ(), "SPMD_TEST_ROLE=faults", faulttrial.EnvFault+"="+kind, spmd.EnvPE+"="+strconv.Itoa(k), spmd.EnvPEs+"="+strconv.Itoa(n),
			spmd.EnvPort+"=ppdev:"+srv.Path(k), spmd.EnvTimeout+"="+timeout.String(), spmd.EnvCheckIn+"=20s", pereport.Env+"="+r.report)
		if k == faulttrial.Victim {
			r.Cmd.Env = append(r.Cmd.Env, victimEnv(kind, n)...)
		}
		r.Cmd.Stdout, r.Cmd.Stderr = &r.stdout, &r.stderr
		if err := r.Cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs[k] = r
	}
	return runs
}

// victimEnv is what the victim's environment adds for a check-in fault
// (faulttrial.CheckInKinds) on an n-PE board.
func victimEnv(kind string, n int) []string {
	switch kind {
	case "pes":
		return []string{spmd.EnvPEs + "=2"}
	case "pesmore":
		return []string{spmd.EnvPEs + "=" + strconv.Itoa(2*n)}
	case "tag":
		return []string{spmd.EnvTag + "=stale"}
	case "dup":
		return []string{spmd.EnvPE + "=0"}
	}
	return nil
}

// faultTrial runs one trial of a fault and adds what it found to tl.
func faultTrial(t *testing.T, board *emu.Board, srv *ppdevfs.Server, kind string, timeout time.Duration, tl *faulttrial.Tally) {
	t.Helper()
	n := board.PEs()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if kind == "stuck" {
		if err := board.Change(faulttrial.StuckLine); err != nil {
			t.Fatal(err)
		}
	}
	if kind == "unplugstart" {
		if err := board.Change(faulttrial.Unplug); err != nil {
			t.Fatal(err)
		}
	}
	if c := faulttrial.StuckInput(kind); c != "" {
		if err := board.Change(c); err != nil {
			t.Fatal(err)
		}
	}
	runs := startRun(ctx, t, srv, n, kind, timeout, 0)
	t0 := time.Now()
	victim := runs[faulttrial.Victim]
	// Check-in's wait, then the failure's, beside the program's 50 sums,
	// which take tens of seconds in race-built PEs at load 30.
	bound := 3*timeout + 80*time.Second
	switch kind {
	case "SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP", "unplug", "unplugvote", "stucklate":
		waitReady(runs, 25*time.Second)
		time.Sleep(50 * time.Millisecond)
		t0 = time.Now()
		switch kind {
		case "unplug", "unplugvote":
			board.Change(faulttrial.Unplug)
		case "stucklate":
			board.Change(faulttrial.StuckLine)
		default:
			victim.Cmd.Process.Signal(map[string]unix.Signal{"SIGINT": unix.SIGINT, "SIGTERM": unix.SIGTERM, "SIGKILL": unix.SIGKILL, "SIGSTOP": unix.SIGSTOP}[kind])
		}
		bound = faulttrial.LocalWork + 4*timeout
	}
	survivors := slices.Delete(slices.Clone(runs), faulttrial.Victim, faulttrial.Victim+1)
	var hung int
	switch kind {
	case "SIGSTOP", "unplug", "unplugvote", "unplugstart":
		// The victim cannot end by itself: kill it once the others have
		// failed, as a person would.
		hung = faulttrial.Wait(survivors, bound)
		victim.Cmd.Process.Signal(unix.SIGKILL)
		hung += faulttrial.Wait([]*peRun{victim}, bound)
	default:
		hung = faulttrial.Wait(runs, bound)
	}
	if kind == "error" || kind == "panic" || kind == "return" {
		t0 = victim.Ended
	}
	if testing.Verbose() {
		t.Logf("%s: PE 0 exit %d: %s", kind, runs[0].Exit, lastLine(runs[0].stderr.String()))
	}
	board.Change(faulttrial.Replug)
	board.Change(faulttrial.Repair)
	var outs []faulttrial.Outcome
	for _, r := range survivors {
		rep, err := pereport.Read(r.report)
		if err != nil {
			t.Errorf("%s: %v", kind, err)
		}
		outs = append(outs, faulttrial.Outcome{Stdout: r.stdout.String(), Report: rep, Exit: r.Exit, Ended: r.Ended})
		if strings.Contains(r.stderr.String(), "DATA RACE") {
			t.Errorf("%s: a survivor's race detector reported:\n%s", kind, r.stderr.String())
		}
	}
	tl.Add(kind, n, t0, outs, hung)
	if strings.Contains(victim.stderr.String(), "DATA RACE") {
		t.Errorf("%s: the victim's race detector reported:\n%s", kind, victim.stderr.String())
	}
}

// waitReady waits until every process has printed "ready" (checked in).
func waitReady(runs []*peRun, bound time.Duration) {
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		all := true
		for _, r := range runs {
			all = all && strings.Contains(r.stdout.String(), "ready")
		}
		if all {
			return
		}
	}
}

// nextRun runs the program without a fault on the same board: every PE
// must check in and print the right sum.
func nextRun(t *testing.T, srv *ppdevfs.Server, n int, timeout time.Duration, staggered bool) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stagger time.Duration
	if staggered {
		stagger = 300 * time.Millisecond
	}
	runs := startRun(ctx, t, srv, n, "", timeout, stagger)
	faulttrial.Wait(runs, 100*time.Second) // the sums at load 30, race-built
	for k, r := range runs {
		if r.Exit != 0 || !strings.Contains(r.stdout.String(), faulttrial.RightSum(n)) {
			return false, fmt.Sprintf("PE %d: exit %d, stdout %q, stderr %q", k, r.Exit, r.stdout.String(), r.stderr.String())
		}
	}
	return true, ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
