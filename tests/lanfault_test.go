//go:build linux

package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/internal/faulttrial"
	"github.com/ttlpapers/ttlpapers/internal/hosts"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// lanKinds are the LAN's faults on the victim's host: its link down for
// 0.3 times the timeout ("linkshort", which must only delay) or for 3
// times it ("linklong"), its PE stopped or killed, or a host on its cable
// that alters the segments it sends ("tamper": hosts.Tamperer).
var lanKinds = []string{"linkshort", "linklong", "SIGSTOP", "SIGKILL", "tamper"}

// TestLANFaultTrials puts a LAN's faults to 4 emulated hosts (package
// internal/hosts), one PE process each, on one board served as ppdev
// files, while their TCP data network is busy (lanprog: Split-C stores,
// then AllStoreSync, round after round). A short link cut only delays:
// every PE exits 0 with the right sum. After a long cut, a stop or a
// kill, every survivor exits non-zero naming the victim (from its
// report), and no PE exits 0 with a wrong sum (a tampered store that
// reached its handler would make one). Every PE ends by itself
// but a stopped one; after each trial a run on the same board, links up,
// works. CI runs one trial of each (a long test); the figures in
// docs/spmd.md ("The LAN's faults on emulated hosts") are from
//
//	TTLPAPERS_LONG_TESTS=1 PAPERS_FAULT_TRIALS=10 go test ./tests -run TestLANFaultTrials -v -timeout 30m
func TestLANFaultTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs PEs on emulated hosts; skipped with -short")
	}
	testenv.Long(t, "fault trials on emulated hosts over a LAN")
	trials, err := faulttrial.Trials()
	if err != nil {
		t.Fatal(err)
	}
	// Long enough that a loaded machine's scheduling does not look like a
	// fault, short enough for CI.
	const n, timeout = 4, 2 * time.Second
	dir := fuseBoard(t, n) // before the hosts, which keep it of the machine's FUSE mounts
	c := hosts.New(t, n, 1, dir)
	prog := bin(t, "lanprog")
	tallies := map[string]*faulttrial.Tally{}
	right := map[string]int{} // linkshort's trials in which every PE exited 0 with the right sum
	var tp *hosts.Tamperer
	for _, kind := range lanKinds {
		tl := &faulttrial.Tally{}
		tallies[kind] = tl
		if kind == "tamper" {
			tp = c.Tamper(t, faulttrial.Victim)
		}
		t.Run(kind, func(t *testing.T) {
			for trial := range trials {
				if lanTrial(t, c, tp, dir, prog, kind, timeout, tl) {
					right[kind]++
				}
				if why := lanNextRun(t, c, dir, prog, timeout); why == "" {
					tl.NextOK++
				} else {
					t.Errorf("trial %d: the next run failed: %s", trial, why)
				}
			}
			if tl.Hung != 0 {
				t.Errorf("%d PEs hung and were killed", tl.Hung)
			}
			if tl.NextOK != tl.Trials {
				t.Errorf("the next run worked after %d of %d trials", tl.NextOK, tl.Trials)
			}
			if kind == "linkshort" {
				if right[kind] != tl.Trials {
					t.Errorf("every PE exited 0 with the right sum in %d of %d trials: %s", right[kind], tl.Trials, strings.Join(tl.Missed, "; "))
				}
				return
			}
			for _, p := range tl.Problems(kind, n) {
				t.Error(p)
			}
			if tl.Named != tl.Trials*(n-1) {
				t.Errorf("%d of %d survivors named PE %d: %s", tl.Named, tl.Trials*(n-1), faulttrial.Victim, strings.Join(tl.Missed, "; "))
			}
		})
	}
	t.Logf("%d PEs on 4 emulated hosts, one board over FUSE, TCP data network, PAPERS_TIMEOUT=%v, victim PE %d, %d trials each:", n, timeout, faulttrial.Victim, trials)
	faulttrial.Table(t.Logf, n, lanKinds, tallies)
	t.Logf("linkshort: every PE exited 0 with the right sum in %d/%d trials", right["linkshort"], tallies["linkshort"].Trials)
}

// lanPE is one PE process of a LAN trial, on its own host.
type lanPE struct {
	faulttrial.Proc
	stdout testenv.Buffer // read while the process writes it
	stderr testenv.Buffer
	report string // where it writes its failure's report (pereport.Env)
}

// startLAN starts PE k of lanprog on host k, for each of the cluster's
// hosts; the run ends after at least rounds rounds, once stop exists.
func startLAN(ctx context.Context, t *testing.T, c *hosts.Cluster, dir, prog string, timeout time.Duration, stop string, rounds int) []*lanPE {
	t.Helper()
	n := len(c.Hosts)
	pes := make([]*lanPE, n)
	for k := range n {
		pe := &lanPE{Proc: faulttrial.Proc{Exit: -1}, report: filepath.Join(t.TempDir(), "report.json")}
		pe.Cmd = c.Command(ctx, k, prog, "-stop", stop, "-rounds", strconv.Itoa(rounds))
		pe.Cmd.Env = append(os.Environ(), spmd.EnvPE+"="+strconv.Itoa(k), spmd.EnvPEs+"="+strconv.Itoa(n),
			spmd.EnvPort+"=ppdev:"+filepath.Join(dir, "parport"+strconv.Itoa(k)), spmd.EnvTimeout+"="+timeout.String(),
			spmd.EnvCheckIn+"=20s", pereport.Env+"="+pe.report)
		pe.Cmd.Stdout, pe.Cmd.Stderr = &pe.stdout, &pe.stderr
		if err := pe.Cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pes[k] = pe
	}
	return pes
}

// lanTrial runs one trial of fault kind and adds what it found to tl. It
// reports whether every PE, the victim too, exited 0 with the right sum.
func lanTrial(t *testing.T, c *hosts.Cluster, tp *hosts.Tamperer, dir, prog, kind string, timeout time.Duration, tl *faulttrial.Tally) bool {
	t.Helper()
	n := len(c.Hosts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := filepath.Join(t.TempDir(), "stop")
	// The run ends in the first round after the stop file appears, so
	// that after a short cut the time to the last exit is the delay.
	pes := startLAN(ctx, t, c, dir, prog, timeout, stop, 1)
	victim := pes[faulttrial.Victim]
	for deadline := time.Now().Add(25 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !slices.ContainsFunc(pes, func(pe *lanPE) bool { return !strings.Contains(pe.stdout.String(), "ready") }) {
			break
		}
	}
	time.Sleep(100 * time.Millisecond) // rounds under way
	t0 := time.Now()
	// A PE that hangs is killed after this: the longest a PE may take is
	// the timeout's 1.5 to name the victim and a timeout to tell the board.
	bound := 4*timeout + 10*time.Second
	relinked := make(chan struct{})
	switch kind {
	case "linkshort", "linklong":
		down := 3 * timeout
		if kind == "linkshort" {
			down = 3 * timeout / 10
		}
		if err := c.SetLink(faulttrial.Victim, false); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(down, func() {
			defer close(relinked)
			if err := c.SetLink(faulttrial.Victim, true); err != nil {
				t.Error(err)
			}
			if kind == "linkshort" {
				os.WriteFile(stop, nil, 0o644) // the delayed run may end now
			}
		})
	case "SIGSTOP", "SIGKILL":
		close(relinked)
		victim.Cmd.Process.Signal(map[string]unix.Signal{"SIGSTOP": unix.SIGSTOP, "SIGKILL": unix.SIGKILL}[kind])
	case "tamper":
		close(relinked)
		before := tp.Tampered()
		tp.Set(true)
		defer func() {
			tp.Set(false)
			if tp.Tampered() == before {
				t.Errorf("tamper: no segment was altered")
			}
		}()
	}
	survivors := slices.Delete(slices.Clone(pes), faulttrial.Victim, faulttrial.Victim+1)
	hung := faulttrial.Wait(survivors, bound)
	if kind == "SIGSTOP" { // it cannot end by itself: killed, as a person would
		victim.Cmd.Process.Signal(unix.SIGKILL)
	}
	hung += faulttrial.Wait([]*lanPE{victim}, bound)
	<-relinked
	var outs []faulttrial.Outcome
	allRight := true
	for k, pe := range pes {
		rep, err := pereport.Read(pe.report)
		if err != nil {
			t.Errorf("%s: PE %d: %v", kind, k, err)
		}
		allRight = allRight && pe.Exit == 0 && strings.Contains(pe.stdout.String(), faulttrial.RightSum(n))
		if testing.Verbose() && rep != nil {
			t.Logf("%s: PE %d exit %d after %v of its round: %s", kind, k, pe.Exit, faulttrial.InPE(pe.stdout.String()), rep.Cause)
		}
		if k != faulttrial.Victim {
			outs = append(outs, faulttrial.Outcome{Stdout: pe.stdout.String(), Report: rep, Exit: pe.Exit, Ended: pe.Ended})
		}
	}
	tl.Add(kind, n, t0, outs, hung)
	return allRight
}

// lanNextRun runs lanprog without a fault on the same board and hosts,
// links up: every PE must exit 0 with the right sum. It returns what went
// wrong, or "".
func lanNextRun(t *testing.T, c *hosts.Cluster, dir, prog string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := filepath.Join(t.TempDir(), "stop")
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pes := startLAN(ctx, t, c, dir, prog, timeout, stop, 20)
	faulttrial.Wait(pes, time.Minute)
	var bad []string
	for k, pe := range pes {
		if pe.Exit != 0 || !strings.Contains(pe.stdout.String(), faulttrial.RightSum(len(pes))) {
			bad = append(bad, "PE "+strconv.Itoa(k)+": exit "+strconv.Itoa(pe.Exit)+": "+strings.TrimSpace(pe.stderr.String()))
		}
	}
	return strings.Join(bad, "; ")
}
