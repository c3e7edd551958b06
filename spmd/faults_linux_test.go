package spmd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// rollCallNames finds the PEs a roll call, a census or the data network
// named.
var rollCallNames = regexp.MustCompile(`PEs? ([0-9, ]+) did not answer the (?:roll call|census)|the data network names PEs? ([0-9, ]+):`)

// The faults TestFaultTrials makes: the victim's program fails (error,
// panic, return), it is signalled, its cable is pulled mid-run, or a data
// line of its cable is stuck from the start.
var faultKinds = []string{"error", "panic", "SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP", "return", "unplug", "stuck"}

// faultTally is what the trials of one fault found.
type faultTally struct {
	trials, named, wrong, hung, nextOK int
	blamed                             int           // survivors that named a healthy PE
	computedWrong                      int           // survivors that computed a wrong sum (and exited non-zero)
	worst                              time.Duration // from the fault to the last survivor's exit
}

// TestFaultTrials runs every fault on a board served as ppdev files over
// FUSE (the path real ports take), one process per PE, then after each one
// the next run on the same board — its PEs started together or one by one —
// and checks that it works. It counts, per fault, the survivors that named
// the victim, any exit 0 with a wrong sum, and the worst time from the
// fault to the last survivor's exit. CI runs one trial of each; the full
// run (docs/spmd.md, "Faults on a real board"):
//
//	PAPERS_FAULT_TRIALS=20 go test ./spmd -run TestFaultTrials -v -timeout 60m
func TestFaultTrials(t *testing.T) {
	kinds := faultKinds
	if s := os.Getenv("PAPERS_FAULT_KINDS"); s != "" {
		kinds = strings.Split(s, ",") // a subset, e.g. SIGKILL,unplug
	}
	faultTrials(t, 4, kinds)
}

// TestFaultTrialsEightPEs is TestFaultTrials' killed and stopped PE on an
// 8-PE board, where PEs share the roll call's data lines (PE 1's line D1
// is PE 5's too), so the board cannot name the victim: the data network
// (TCP, as on a real board) must, on every survivor.
func TestFaultTrialsEightPEs(t *testing.T) {
	faultTrials(t, 8, []string{"SIGKILL", "SIGSTOP"})
}

// faultTrials runs the trials of kinds on an n-PE board and checks and
// logs what they found.
func faultTrials(t *testing.T, n int, kinds []string) {
	trials := 1
	if s := os.Getenv("PAPERS_FAULT_TRIALS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("PAPERS_FAULT_TRIALS=%q: want a positive whole number", s)
		}
		trials = v
	}
	const timeout = time.Second
	board, srv := serveBoard(t, n)
	tallies := map[string]*faultTally{}
	for _, kind := range kinds {
		tl := &faultTally{}
		tallies[kind] = tl
		for trial := range trials {
			faultTrial(t, board, srv, kind, timeout, tl)
			if ok, why := nextRun(t, srv, n, timeout, trial%2 == 1); ok {
				tl.nextOK++
			} else {
				t.Errorf("%s, trial %d: the next run failed: %s", kind, trial, why)
			}
		}
		t.Logf("%s done: %+v", kind, *tl)
	}
	t.Logf("%d PEs on ppdev over FUSE, PAPERS_TIMEOUT=%v, victim PE %d, %d trials each:", n, timeout, faultVictim, trials)
	t.Logf("%-8s %8s %14s %10s %6s %12s %9s", "fault", "trials", "victim named", "wrong exit0", "hung", "worst exit", "next run")
	for _, kind := range kinds {
		tl := tallies[kind]
		t.Logf("%-8s %8d %11d/%-2d %10d %6d %12v %6d/%-2d", kind, tl.trials, tl.named, tl.trials*(n-1), tl.wrong, tl.hung, tl.worst.Round(time.Millisecond), tl.nextOK, tl.trials)
		if tl.wrong != 0 {
			t.Errorf("%s: %d survivors exited 0 with a wrong sum", kind, tl.wrong)
		}
		if tl.blamed != 0 {
			t.Errorf("%s: %d survivors named a healthy PE", kind, tl.blamed)
		}
		// A pulled cable is not announced: the census must find it,
		// before any survivor computes a sum without it.
		if kind == "unplug" && (tl.named != tl.trials*(n-1) || tl.computedWrong != 0) {
			t.Errorf("unplug: %d of %d survivors named PE %d (the census), %d computed a wrong sum", tl.named, tl.trials*(n-1), faultVictim, tl.computedWrong)
		}
		// A PE that returns announces it (papers.PE.Finish): every
		// survivor names it as returned. Beyond four PEs the data
		// network names a killed or stopped PE on every survivor.
		if (kind == "return" || n > 4) && tl.named != tl.trials*(n-1) {
			t.Errorf("%s: %d of %d survivors named PE %d", kind, tl.named, tl.trials*(n-1), faultVictim)
		}
	}
}

// peRun is one PE process of a trial.
type peRun struct {
	cmd    *exec.Cmd
	stdout testenv.Buffer // read while the process writes it (waitReady)
	stderr strings.Builder
	exit   int
	ended  time.Time
}

// startRun starts n PE processes of faultProgram with fault kind ("" for
// none), the k-th after k*stagger, and returns once all have started.
func startRun(ctx context.Context, t *testing.T, srv *ppdevfs.Server, n int, kind string, timeout, stagger time.Duration) []*peRun {
	t.Helper()
	runs := make([]*peRun, n)
	for k := range n {
		if k > 0 {
			time.Sleep(stagger)
		}
		r := &peRun{exit: -1}
		r.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		r.cmd.Env = append(os.Environ(), "SPMD_TEST_ROLE=faults", "SPMD_FAULT="+kind, spmd.EnvPE+"="+strconv.Itoa(k), spmd.EnvPEs+"="+strconv.Itoa(n),
			spmd.EnvPort+"=ppdev:"+srv.Path(k), spmd.EnvTimeout+"="+timeout.String(), spmd.EnvCheckIn+"=20s")
		r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs[k] = r
	}
	return runs
}

// wait waits for every process, killing those still running after bound,
// and returns how many were killed.
func wait(runs []*peRun, bound time.Duration) (hung int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, r := range runs {
		wg.Go(func() {
			done := make(chan error, 1)
			go func() { done <- r.cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(bound):
				mu.Lock()
				hung++
				mu.Unlock()
				r.cmd.Process.Kill()
				err = <-done
			}
			r.ended = time.Now()
			r.exit = 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				r.exit = ee.ExitCode()
			}
		})
	}
	wg.Wait()
	return hung
}

// faultTrial runs one trial of a fault and adds what it found to tl.
func faultTrial(t *testing.T, board *emu.Board, srv *ppdevfs.Server, kind string, timeout time.Duration, tl *faultTally) {
	t.Helper()
	n := board.PEs()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if kind == "stuck" {
		if err := board.Change(fmt.Sprintf("PE%d.D3=stuck0", faultVictim)); err != nil {
			t.Fatal(err)
		}
	}
	runs := startRun(ctx, t, srv, n, kind, timeout, 0)
	t0 := time.Now()
	victim := runs[faultVictim]
	bound := 3*timeout + 20*time.Second // check-in's wait, then the failure's
	switch kind {
	case "SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP", "unplug":
		waitReady(runs, 25*time.Second)
		time.Sleep(50 * time.Millisecond)
		t0 = time.Now()
		switch kind {
		case "unplug":
			board.Change(fmt.Sprintf("PE%d=unplug", faultVictim))
		default:
			victim.cmd.Process.Signal(map[string]unix.Signal{"SIGINT": unix.SIGINT, "SIGTERM": unix.SIGTERM, "SIGKILL": unix.SIGKILL, "SIGSTOP": unix.SIGSTOP}[kind])
		}
		bound = 4 * timeout
	}
	survivors := slices.Delete(slices.Clone(runs), faultVictim, faultVictim+1)
	var hung int
	switch kind {
	case "SIGSTOP", "unplug":
		// The victim cannot end by itself: kill it once the others have
		// failed, as a person would.
		hung = wait(survivors, bound)
		victim.cmd.Process.Signal(unix.SIGKILL)
		hung += wait([]*peRun{victim}, bound)
	default:
		hung = wait(runs, bound)
	}
	if kind == "error" || kind == "panic" || kind == "return" {
		t0 = victim.ended
	}
	if testing.Verbose() {
		t.Logf("%s: PE 0 exit %d: %s", kind, runs[0].exit, lastLine(runs[0].stderr.String()))
	}
	board.Change(fmt.Sprintf("PE%d=replug", faultVictim))
	board.Change(fmt.Sprintf("PE%d=repair", faultVictim))
	tl.trials++
	tl.hung += hung
	for _, r := range survivors {
		msg := r.stderr.String()
		if strings.Contains(r.stdout.String(), "sum=") && !strings.Contains(r.stdout.String(), fmt.Sprintf("sum=%d", n*(n+1)/2)) {
			if r.exit == 0 {
				tl.wrong++
			}
			tl.computedWrong++
		}
		if kind == "return" {
			// An early return is named as such, not as a PE that died.
			if r.exit != 0 && strings.Contains(msg, fmt.Sprintf("PE %d returned from the program", faultVictim)) {
				tl.named++
			}
		} else if r.exit != 0 && (strings.Contains(msg, fmt.Sprintf("PE %d left the group", faultVictim)) || strings.Contains(msg, fmt.Sprintf("PE %d's data line", faultVictim)) ||
			kind == "stuck" && strings.Contains(msg, "D3 (DB-25 pin 5)") || strings.Contains(msg, fmt.Sprintf("PE %d did not", faultVictim)) ||
			strings.Contains(msg, fmt.Sprintf("the data network names PE %d:", faultVictim))) {
			tl.named++
		}
		for _, m := range rollCallNames.FindAllStringSubmatch(msg, -1) {
			for _, f := range strings.FieldsFunc(m[1]+m[2], func(r rune) bool { return r == ',' || r == ' ' }) {
				if f != strconv.Itoa(faultVictim) {
					tl.blamed++
				}
			}
		}
		if d := r.ended.Sub(t0); d > tl.worst {
			tl.worst = d
		}
		if strings.Contains(msg, "DATA RACE") {
			t.Errorf("%s: a survivor's race detector reported:\n%s", kind, msg)
		}
	}
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stagger time.Duration
	if staggered {
		stagger = 300 * time.Millisecond
	}
	runs := startRun(ctx, t, srv, n, "", timeout, stagger)
	wait(runs, 25*time.Second)
	for k, r := range runs {
		if r.exit != 0 || !strings.Contains(r.stdout.String(), fmt.Sprintf("sum=%d", n*(n+1)/2)) {
			return false, fmt.Sprintf("PE %d: exit %d, stdout %q, stderr %q", k, r.exit, r.stdout.String(), r.stderr.String())
		}
	}
	return true, ""
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
