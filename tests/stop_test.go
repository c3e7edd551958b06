//go:build linux

package tests

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/launch"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// EnvStopTrials, when set, is the number of SIGSTOP trials
// TestRunStopRandomPE makes (the stress test: 1000 is the figure the docs
// report); by default it makes a quick few.
const EnvStopTrials = "TTLPAPERS_STOP_TRIALS"

// stopTrial is one SIGSTOP/SIGCONT trial: PE victim of a 3-PE run is
// stopped after delay for stopFor, then continued.
type stopTrial struct {
	victim         int
	delay, stopFor time.Duration
	timeout        time.Duration // PAPERS_TIMEOUT
}

// outcome of a trial: nil when the run did what a stop of that length
// allows, hang when the run had to be ended from outside.
func (tr stopTrial) run(t *testing.T, dir string) (hang bool, err error) {
	const n = 3
	var out bytes.Buffer
	// Built before the deadline starts: the first trial builds the
	// programs, which took 96 s at load 45, and its run, started after
	// the deadline had passed, read as hung.
	prog := bin(t, "spmd")
	// A run that outlives this is hung: no PE's deadline fired.
	ctx, cancel := context.WithTimeout(context.Background(), 2*tr.timeout+tr.stopFor+30*time.Second)
	defer cancel()
	var timers sync.WaitGroup
	rep, err := launch.Run(ctx, launch.Config{
		N: n, Program: prog, Args: []string{"-rounds", "2000"}, Dir: dir, Stdout: &out, Stderr: &out, Timeout: tr.timeout,
		// The check-in waits for the PEs to start, not on a barrier: a
		// stop then only delays it. (Its own timeout, the run's by
		// default, can be shorter than a loaded machine's start.)
		Env: []string{spmd.EnvCheckIn + "=1m"},
		Started: func(pe int, p *os.Process) {
			if pe != tr.victim {
				return
			}
			timers.Add(1)
			time.AfterFunc(tr.delay, func() {
				p.Signal(unix.SIGSTOP)
				time.AfterFunc(tr.stopFor, func() { p.Signal(unix.SIGCONT); timers.Done() })
			})
		},
	})
	timers.Wait()
	if err != nil {
		return false, err
	}
	if ctx.Err() != nil {
		return true, fmt.Errorf("hung: the run was still going after %v: %+v\n%s", 2*tr.timeout+tr.stopFor+30*time.Second, rep, out.String())
	}
	ok := rep.Status == 0 && strings.Count(out.String(), "sum=3") == n
	// A stop longer than the timeout may fail the run, but only by naming
	// the stopped PE; a shorter one must not fail it at all (unless the
	// machine is so loaded that a PE missed its deadline for want of CPU).
	blamed := rep.Failed == tr.victim && strings.Contains(rep.Reason, fmt.Sprintf("PE %d", tr.victim))
	switch {
	case ok:
		return false, nil
	case tr.stopFor >= tr.timeout && blamed:
		return false, nil
	case tr.stopFor < tr.timeout && blamed && testenv.Overloaded():
		t.Logf("overloaded machine: a %v stop failed the run: %s", tr.stopFor, rep.Reason)
		return false, nil
	}
	return false, fmt.Errorf("report %+v\n%s", rep, out.String())
}

// TestRunStopRandomPE stops a random PE of a 3-PE run at a random moment
// for a random time, shorter or longer than the PEs' timeout, then
// continues it. A stopped PE is just absent: the run goes on when it comes
// back in time, and otherwise fails naming it; never does any PE hang.
// Set TTLPAPERS_STOP_TRIALS=1000 for the stress test.
func TestRunStopRandomPE(t *testing.T) {
	trials := 8
	if s := os.Getenv(EnvStopTrials); s != "" {
		trials, _ = strconv.Atoi(s)
	}
	dir := shmDir(t)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 16))
	hangs, failures, long := 0, 0, 0
	start := time.Now()
	for i := 0; i < trials; i++ {
		tr := stopTrial{victim: rng.IntN(3), delay: time.Duration(rng.IntN(200_000)) * time.Microsecond, timeout: 2 * time.Second}
		if rng.IntN(4) == 0 { // longer than the timeout
			tr.timeout, tr.stopFor = 300*time.Millisecond, 400*time.Millisecond+time.Duration(rng.IntN(400))*time.Millisecond
			long++
		} else {
			tr.stopFor = time.Duration(rng.IntN(300_000)) * time.Microsecond
		}
		hang, err := tr.run(t, dir)
		if hang {
			hangs++
		}
		if err != nil {
			failures++
			t.Errorf("trial %d (seed %d): stop PE %d after %v for %v, timeout %v: %v", i, seed, tr.victim, tr.delay, tr.stopFor, tr.timeout, err)
		}
	}
	t.Logf("%d SIGSTOP/SIGCONT trials (%d longer than the timeout) in %v: %d hangs, %d wrong outcomes", trials, long, time.Since(start).Round(time.Second), hangs, failures)
}

// TestRunStoppedPENamed: when a stopped PE holds the others up past their
// timeout, the launcher names it — not the PEs that waited for it — and
// the report stays so whatever the order in which the survivors' exits
// and the grace period's kill of the stopped PE arrive (a short grace
// makes the kill come soon after the blame). Repeated
// $TTLPAPERS_RUN_TRIALS times.
func TestRunStoppedPENamed(t *testing.T) {
	n := testenv.Trials(t, 3)
	for trial := range n {
		dir := shmDir(t)
		var out bytes.Buffer
		done := make(chan struct{})
		var wg sync.WaitGroup
		rep, err := launch.Run(context.Background(), launch.Config{N: 3, Program: bin(t, "spmd"), Args: []string{"-rounds", "1000000000"}, Dir: dir,
			Stdout: &out, Stderr: &out, Timeout: 2 * time.Second, Grace: time.Duration(trial%4) * 20 * time.Millisecond,
			// Check-in may take long on a loaded machine: only the stop
			// of PE 1, once every PE computes, is to time the others out
			// (at 300 ms, at load 12-15, a healthy PE was late too).
			Env: []string{spmd.EnvCheckIn + "=1m"},
			Started: func(pe int, p *os.Process) {
				if pe == 1 {
					wg.Go(func() {
						if waitComputing(done, dir, 3) {
							p.Signal(unix.SIGSTOP)
						}
					})
				}
			}})
		close(done)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed != 1 || rep.Status != 1 || rep.Signal != nil || !strings.HasPrefix(rep.Reason, "PE 1 did not arrive") || !strings.Contains(rep.Reason, "PE 1's process is stopped") {
			t.Fatalf("trial %d: report %+v, want PE 1 named as the stopped PE that did not arrive, status 1\n%s", trial, rep, out.String())
		}
	}
	t.Logf("%d trials: the stopped PE named, status 1, every time", n)
}

// TestRunStoppedInCheckIn: a PE stopped during check-in — before it
// opens the board, while it waits for the others, or in an acknowledge —
// for longer than the others' check-in timeout is named by the launcher
// as stopped, not the PE whose check-in gave up first. Repeated
// $TTLPAPERS_RUN_TRIALS times (at least 4: one per moment).
func TestRunStoppedInCheckIn(t *testing.T) {
	n := max(testenv.Trials(t, 4), 4)
	for trial := range n {
		dir := shmDir(t)
		var out bytes.Buffer
		var wg sync.WaitGroup
		delay := []time.Duration{0, 20 * time.Millisecond, 80 * time.Millisecond, 150 * time.Millisecond}[trial%4]
		rep, err := launch.Run(context.Background(), launch.Config{N: 3, Program: bin(t, "spmd"), Args: []string{"-rounds", "10"}, Dir: dir,
			Stdout: &out, Stderr: &out, Timeout: 300 * time.Millisecond, Env: []string{spmd.EnvCheckIn + "=2s"},
			Started: func(pe int, p *os.Process) {
				if pe == 1 {
					wg.Go(func() {
						time.Sleep(delay)
						p.Signal(unix.SIGSTOP)
						time.Sleep(5 * time.Second) // past the others' check-in
						p.Signal(unix.SIGCONT)
					})
				}
			}})
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(out.String(), "sum=") == 3 {
			t.Logf("trial %d: PE 1 checked in within %v, before its stop: the run finished", trial, delay)
			continue
		}
		if rep.Failed != 1 || rep.Status == 0 || !strings.Contains(rep.Reason, "PE 1's process is stopped") {
			t.Fatalf("trial %d: PE 1 stopped %v after its start: report %+v, want PE 1 named as stopped\n%s", trial, delay, rep, out.String())
		}
	}
}

// waitComputing waits until the n PEs of the one board in dir are past
// check-in and reports whether they got there before done. Check-in runs
// barriers too (its acknowledge, votes and agreement: under 100 at 3 PEs,
// 175 port operations at 4), so seeing both barrier phases is not enough:
// each PE must be seen to change phase computingFlips times, which only
// the program's own NANDs do.
func waitComputing(done <-chan struct{}, dir string, n int) bool {
	const computingFlips = 400
	var b *emu.Board
	defer func() {
		if b != nil {
			b.Close()
		}
	}()
	last, flips := make([]uint8, n), make([]int, n)
	for {
		select {
		case <-done:
			return false
		case <-time.After(100 * time.Microsecond):
		}
		if b == nil {
			paths, _ := filepath.Glob(filepath.Join(dir, launch.BoardPrefix+"*"))
			if len(paths) != 1 {
				continue
			}
			var err error
			if b, err = emu.OpenShared(paths[0]); err != nil {
				continue
			}
		}
		all := true
		for k := range n {
			if ph := b.PortInfo(k).Data & lpt.Strobes; (ph == lpt.S0 || ph == lpt.S1) && ph != last[k] {
				last[k] = ph
				flips[k]++
			}
			all = all && flips[k] >= computingFlips
		}
		if all {
			return true
		}
	}
}

// TestRunSignalEndsStoppedPE: SIGTERM to the launcher ends every PE, a
// stopped one included, within a second.
func TestRunSignalEndsStoppedPE(t *testing.T) {
	dir := shmDir(t)
	sigs := make(chan os.Signal, 1)
	var out bytes.Buffer
	var sent time.Time
	go func() {
		waitOpened(dir, 3)
		stopHolder(dir, 2)
		sent = time.Now()
		sigs <- unix.SIGTERM
	}()
	rep, err := launch.Run(context.Background(), launch.Config{N: 3, Program: bin(t, "spmd"), Args: []string{"-rounds", "1000000000"}, Dir: dir,
		Stdout: &out, Stderr: &out, Signals: sigs})
	if err != nil {
		t.Fatal(err)
	}
	var last time.Duration
	for _, x := range rep.Exits {
		if x.Status == 0 {
			t.Errorf("PE %d exited 0 after SIGTERM", x.PE)
		}
		last = max(last, x.At.Sub(sent))
	}
	report := t.Errorf
	if testenv.Overloaded() {
		report = t.Logf
	}
	if last > time.Second {
		report("the last PE ended %v after SIGTERM, want within 1s", last)
	}
	t.Logf("every PE ended within %v of SIGTERM (PE 2 stopped)", last)
}

// stopHolder stops the process holding PE pe's port on the one board in
// dir.
func stopHolder(dir string, pe int) {
	paths, _ := filepath.Glob(filepath.Join(dir, launch.BoardPrefix+"*"))
	for _, p := range paths {
		if info, err := emu.InspectShared(p); err == nil && info.Holders[pe] != 0 {
			unix.Kill(info.Holders[pe], unix.SIGSTOP)
		}
	}
}
