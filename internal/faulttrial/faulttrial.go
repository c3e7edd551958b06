// Package faulttrial is what the fault trials share — package spmd's on a
// board served as ppdev files, package hil's in QEMU machines against the
// same board: the PE program, the faults it is put through, and how the
// survivors of a trial are counted (docs/spmd.md, "Faults on a real
// board"). The counting is the part that must not differ between the two,
// so that their tables compare. It reads what each survivor's error named
// from the report its spmd.Main wrote (package pereport), never from its
// text.
package faulttrial

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Victim is the PE that makes the fault; the others are the survivors.
const Victim = 1

// stuckLine is the data line the stuck fault sticks (StuckLine).
const stuckLine = "D3"

// EnvFault names the fault for Program (one of Kinds; empty for none).
const EnvFault = "SPMD_FAULT"

// Kinds are the faults: the victim's program fails (error, panic, return),
// it is signalled, its cable is pulled mid-run, or a data line of its
// cable is stuck from the start.
var Kinds = []string{"error", "panic", "SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP", "return", "unplug", "stuck"}

// CheckInKinds are the faults check-in must name before any PE computes:
// the victim was started for 2 PEs, or for twice the board's ("pes",
// "pesmore"), with another tag, as a stale build would be ("tag"), or with PE 0's id
// ("dup") (papers.MismatchError); its own status input nAck is stuck at 0
// or at 1 ("input0", "input1": papers.InputError); it is interrupted
// while it waits at check-in for the others ("intcheckin": DuringCheckIn),
// or its cable is unplugged before it starts ("unplugstart": the others
// cannot tell it from a PC not yet started, and name it when
// PAPERS_CHECKIN ends). Only spmd's process trials make them; FromEnv's
// default leaves them out.
var CheckInKinds = []string{"pes", "pesmore", "tag", "dup", "input0", "input1", "intcheckin", "unplugstart"}

// DuringCheckIn is, for the faults a PE gets while it waits at check-in,
// its signal: the victim gets it while it and the others but the last PE
// wait for that one, which then arrives at a check-in the victim has
// left. The PEs that checked in with the victim name it at once; the last
// cannot (the others have ended by then, and a PE that left reads as one
// not yet started): it fails when PAPERS_CHECKIN ends.
var DuringCheckIn = map[string]os.Signal{"intcheckin": os.Interrupt}

// ProofKinds are the faults only a run's proof can find (papers.PE.Finish
// takes a census and tests every data line before a PE may end with
// success): during the PEs' local computation the victim's cable is
// pulled ("unplugvote") or its data line sticks at 0 ("stucklate"), and
// then the PEs sum by votes, which, unlike a gather, no census checks, and
// print the sum without checking it, as a real program would. Only
// spmd's process trials make them; FromEnv's default leaves them out.
var ProofKinds = []string{"unplugvote", "stucklate"}

// LocalWork is how long the PEs of a proof fault compute locally, after
// "ready", before they sum by votes: the trial makes the fault in it.
const LocalWork = 500 * time.Millisecond

// StuckInput is the change to the board that makes a check-in fault
// "input0" or "input1", and "" for any other kind.
func StuckInput(kind string) string {
	level, ok := strings.CutPrefix(kind, "input")
	if !ok {
		return ""
	}
	return fmt.Sprintf("PE%d.nAck=stuck%s", Victim, level)
}

// KindsChosen reports whether PAPERS_FAULT_KINDS chose the kinds.
func KindsChosen() bool { return os.Getenv("PAPERS_FAULT_KINDS") != "" }

// StuckLine is the stuck fault's change to the board (ppdevfs.ChangeFaults,
// emu.Board.Change), and Unplug, Replug and Repair the others a trial makes.
var (
	StuckLine = fmt.Sprintf("PE%d.%s=stuck0", Victim, stuckLine)
	Unplug    = fmt.Sprintf("PE%d=unplug", Victim)
	Replug    = fmt.Sprintf("PE%d=replug", Victim)
	Repair    = fmt.Sprintf("PE%d=repair", Victim)
)

// Rounds is how many checked sums every PE computes before the victim
// makes its fault: 50, or 10 beyond four PEs, whose runs are slower.
func Rounds(pes int) int {
	if pes > 4 {
		return 10
	}
	return 50
}

// Program is the trials' PE program (run it with spmd.Main): checked sums
// of every PE's id+1, after printing "ready". With EnvFault set, the
// victim fails after Rounds sums in the way it names and the others go on
// until they notice; without it, every PE prints the last sum ("sum=N")
// and returns. A sum that fails prints how long it took by the PE's own
// clock ("failed after D"), which bounds the time from the fault to the
// error: the sum began before the fault or after it.
func Program(p *papers.PE) error {
	kind := os.Getenv(EnvFault)
	fmt.Println("ready")
	if slices.Contains(ProofKinds, kind) {
		time.Sleep(LocalWork)
		s, err := voteSum(p, p.Self()+1)
		if err != nil {
			return err
		}
		fmt.Printf("sum=%d\n", s)
		return nil
	}
	want := int32(p.PEs() * (p.PEs() + 1) / 2)
	rounds := Rounds(p.PEs())
	for i := 0; ; i++ {
		start := time.Now()
		s, err := papers.Reduce(p, papers.Sum, int32(p.Self()+1))
		if err != nil {
			fmt.Printf("%s%v\n", FailedAfter, time.Since(start))
			return err
		}
		if s != want {
			fmt.Printf("sum=%d\n", s) // a wrong answer, for the tally to count
			return fmt.Errorf("sum %d, want %d", s, want)
		}
		if i < rounds {
			continue
		}
		switch {
		case kind == "":
			fmt.Printf("sum=%d\n", s)
			return nil
		case p.Self() != Victim:
		case kind == "error":
			return errors.New("injected error")
		case kind == "panic":
			panic("injected panic")
		case kind == "return":
			return nil
		}
	}
}

// voteSum is the sum over all PEs of x (below 2^16) by votes, one a bit,
// as examples/spmd sums.
func voteSum(p *papers.PE, x int) (int, error) {
	sum := 0
	for b := range 16 {
		mask, err := p.Vote(x>>b&1 == 1)
		if err != nil {
			return 0, err
		}
		sum += mask.Len() << b
	}
	return sum, nil
}

// FailedAfter starts the line a trial's program prints when an operation
// fails, before how long it took.
const FailedAfter = "failed after "

// RightSum is what a clean run of n PEs prints ("sum=N").
func RightSum(n int) string { return fmt.Sprintf("sum=%d", n*(n+1)/2) }

// FromEnv reads the trials' settings: PAPERS_FAULT_TRIALS, trials per
// fault (default 1), and PAPERS_FAULT_KINDS, a comma-separated subset of
// Kinds (default all).
func FromEnv() (trials int, kinds []string, err error) {
	trials, err = Trials()
	if err != nil {
		return 0, nil, err
	}
	kinds = Kinds
	if s := os.Getenv("PAPERS_FAULT_KINDS"); s != "" {
		kinds = strings.Split(s, ",")
		for _, k := range kinds {
			if all := slices.Concat(Kinds, CheckInKinds, ProofKinds); !slices.Contains(all, k) {
				return 0, nil, fmt.Errorf("PAPERS_FAULT_KINDS=%q: %q is not one of %s", s, k, strings.Join(all, ","))
			}
		}
	}
	return trials, kinds, nil
}

// Trials reads PAPERS_FAULT_TRIALS, the trials per fault (default 1).
func Trials() (int, error) {
	s := os.Getenv("PAPERS_FAULT_TRIALS")
	if s == "" {
		return 1, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return 0, fmt.Errorf("PAPERS_FAULT_TRIALS=%q: want a positive whole number", s)
	}
	return v, nil
}

// Outcome is how one PE of a trial ended.
type Outcome struct {
	Stdout string
	// Report is what its failure's error said (pereport.Env); nil when it
	// wrote none: it did not fail, or was killed.
	Report *pereport.Report
	Exit   int       // exit status; 0 also when it was not known
	Ended  time.Time // when the trial saw it end
}

// Proc is one PE process of a trial: its command, and once Wait has
// seen it end, its exit status (-1 when a signal ended it) and when.
type Proc struct {
	Cmd   *exec.Cmd
	Exit  int
	Ended time.Time
}

// Process returns p, for Wait: a trial's own process type embeds Proc.
func (p *Proc) Process() *Proc { return p }

// Wait waits for the started PE processes ps, killing those still running
// after bound, and returns how many it killed.
func Wait[P interface{ Process() *Proc }](ps []P, bound time.Duration) (hung int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, pp := range ps {
		p := pp.Process()
		wg.Go(func() {
			done := make(chan error, 1)
			go func() { done <- p.Cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(bound):
				mu.Lock()
				hung++
				mu.Unlock()
				p.Cmd.Process.Kill()
				err = <-done
			}
			p.Ended, p.Exit = time.Now(), 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				p.Exit = ee.ExitCode()
			}
		})
	}
	wg.Wait()
	return hung
}

// Tally is what the trials of one fault found.
type Tally struct {
	Trials, Named, Wrong, Hung, NextOK int
	Blamed                             int           // survivors that named a healthy PE
	ComputedWrong                      int           // survivors that computed a wrong sum (and exited non-zero)
	Worst                              time.Duration // from the fault to the last survivor's exit
	// WorstInPE is the longest a survivor's failing sum lasted by its own
	// clock: a bound on the time from the fault to its error that leaves
	// out how late the fault and the report travelled (in QEMU machines
	// on a busy host, seconds).
	WorstInPE time.Duration
	// Missed is what the survivors that did not name the victim said
	// (their error, or how they ended), for the log.
	Missed []string
	// Traced counts the survivors of Named that named instead other
	// survivors that left the group first, each of which named the
	// victim: a PE that finds the fault in its own call (a frame from the
	// victim that failed authentication) fails at once, and the others
	// learn it from its interrupt.
	Traced int
}

// Add counts one trial of fault kind on n PEs: its survivors' outcomes, the
// fault's time t0, and how many PEs had to be killed because they hung.
func (tl *Tally) Add(kind string, n int, t0 time.Time, survivors []Outcome, hung int) {
	tl.Trials++
	tl.Hung += hung
	byPE := map[int]Outcome{}
	for _, r := range survivors {
		if r.Report != nil {
			byPE[r.Report.PE] = r
		}
	}
	for _, r := range survivors {
		if strings.Contains(r.Stdout, "sum=") && !strings.Contains(r.Stdout, RightSum(n)) {
			if r.Exit == 0 {
				tl.Wrong++
			}
			tl.ComputedWrong++
		}
		switch {
		case r.Exit != 0 && Names(kind, r.Report):
			tl.Named++
		case r.Exit != 0 && tracesTo(kind, r.Report, byPE):
			tl.Named++
			tl.Traced++
		default:
			said := "no report"
			if r.Report != nil {
				said = r.Report.Cause
			}
			tl.Missed = append(tl.Missed, fmt.Sprintf("exit %d: %q", r.Exit, said))
		}
		tl.Blamed += blamed(r.Report)
		if d := r.Ended.Sub(t0); d > tl.Worst {
			tl.Worst = d
		}
		tl.WorstInPE = max(tl.WorstInPE, InPE(r.Stdout))
	}
}

// InPE is how long a PE's failing round lasted by its own clock, as its
// output says (FailedAfter); 0 when it does not.
func InPE(stdout string) time.Duration {
	if _, after, ok := strings.Cut(stdout, FailedAfter); ok {
		line, _, _ := strings.Cut(after, "\n")
		if d, err := time.ParseDuration(strings.TrimSpace(line)); err == nil {
			return d
		}
	}
	return 0
}

// Names reports whether a survivor's report names the victim as the
// cause of fault kind: an early return as such (the interrupt that
// announced it); otherwise its departure (beside a survivor that found it
// gone first and left failing, when a cable is pulled while a census's
// vote is read), its silence at a roll call or a census, the data
// network's verdict, or its data line — for a stuck line, the stuck line
// D3 even when the board cannot say whose it is.
func Names(kind string, r *pereport.Report) bool {
	switch {
	case r == nil:
		return false
	case kind == "return":
		return slices.Contains(r.Returned, Victim)
	case (kind == "stuck" || kind == "stucklate") && r.Line != nil && r.Line.Name == stuckLine:
		return true
	case kind == "pes" || kind == "pesmore":
		return r.Kind == pereport.Mismatch && r.Differs == "PE count" && r.Names(Victim)
	case kind == "tag":
		return r.Kind == pereport.Mismatch && r.Differs == "program" && r.Names(Victim)
	case kind == "dup": // the victim runs as PE 0 too
		return r.Kind == pereport.Mismatch && r.Differs == "PE id" && r.Names(0)
	case kind == "input0" || kind == "input1":
		return r.Kind == pereport.Input && r.Names(Victim) && r.Line != nil &&
			r.Line.Name == "nAck" && r.Line.Stuck == kind[len("input")]-'0'
	}
	return r.Names(Victim)
}

// tracesTo reports whether r says that other survivors left the group,
// each of which failed naming the victim (byPE: the survivors by PE).
func tracesTo(kind string, r *pereport.Report, byPE map[int]Outcome) bool {
	if r == nil || r.Kind != pereport.Interrupt || len(r.Named) == 0 {
		return false
	}
	for _, k := range r.Named {
		o, ok := byPE[k]
		if !ok || k == r.PE || o.Exit == 0 || !Names(kind, o.Report) {
			return false
		}
	}
	return true
}

// blamed counts the healthy PEs a survivor's report names as silent at a
// roll call or a census, or as absent from the data network. (PEs that
// left with an interrupt are not counted: a survivor may leave failing
// beside the victim.)
func blamed(r *pereport.Report) int {
	if r == nil || r.Kind != pereport.Timeout && r.Kind != pereport.Absent && r.Kind != pereport.Lost {
		return 0
	}
	n := 0
	for _, k := range r.Named {
		if k != Victim {
			n++
		}
	}
	return n
}

// Problems are the broken promises in the trials of fault kind on n PEs:
// an exit 0 with a wrong sum, a healthy PE named, and for a pulled cable
// (which nobody announces) a survivor that did not name it or computed a
// sum without it.
func (tl *Tally) Problems(kind string, n int) []string {
	var p []string
	if tl.Wrong != 0 {
		p = append(p, fmt.Sprintf("%s: %d survivors exited 0 with a wrong sum", kind, tl.Wrong))
	}
	if tl.Blamed != 0 {
		p = append(p, fmt.Sprintf("%s: %d survivors named a healthy PE", kind, tl.Blamed))
	}
	if kind == "unplug" && (tl.Named != tl.Trials*(n-1) || tl.ComputedWrong != 0) {
		p = append(p, fmt.Sprintf("unplug: %d of %d survivors named PE %d (the census), %d computed a wrong sum", tl.Named, tl.Trials*(n-1), Victim, tl.ComputedWrong))
	}
	// A PE that returns announces it (papers.PE.Finish): every survivor
	// names it as returned. Beyond four PEs the data network names a
	// killed or stopped PE on every survivor. Check-in names the check-in
	// faults on every PE.
	want := n - 1
	if _, ok := DuringCheckIn[kind]; ok {
		want = n - 2
	}
	if (kind == "return" || n > 4 || slices.Contains(CheckInKinds, kind) || slices.Contains(ProofKinds, kind)) && tl.Named < tl.Trials*want {
		p = append(p, fmt.Sprintf("%s: %d of %d survivors named PE %d", kind, tl.Named, tl.Trials*want, Victim))
	}
	if len(p) != 0 && len(tl.Missed) != 0 {
		p = append(p, fmt.Sprintf("%s: the survivors that did not name PE %d said: %s", kind, Victim, strings.Join(tl.Missed, "; ")))
	}
	return p
}

// Table writes the tallies of kinds, one line each, through logf (a
// test's Logf).
func Table(logf func(format string, args ...any), n int, kinds []string, tallies map[string]*Tally) {
	logf("%-8s %8s %14s %7s %10s %6s %12s %12s %9s", "fault", "trials", "victim named", "traced", "wrong exit0", "hung", "worst exit", "worst in PE", "next run")
	for _, kind := range kinds {
		tl := tallies[kind]
		logf("%-8s %8d %11d/%-2d %7d %10d %6d %12v %12v %6d/%-2d", kind, tl.Trials, tl.Named, tl.Trials*(n-1), tl.Traced, tl.Wrong, tl.Hung, tl.Worst.Round(time.Millisecond), tl.WorstInPE.Round(time.Millisecond), tl.NextOK, tl.Trials)
	}
}
