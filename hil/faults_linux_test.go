package hil_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/faulttrial"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// The fault trials in machines: this test binary, built static, is every
// machine's program. As the driver it takes commands typed on its console
// (hil.Config.Input) — run a PE of the trials' program with a fault,
// signal it, quit — and reports on the console what its PE did, so that
// one boot serves every trial. As the PE it is faulttrial.Program under
// spmd.Main, on the machine's port at 0x378 (ioperm and inb/outb).
const (
	driverRole = "fault-driver"
	peRole     = "fault-pe"
)

// The driver's reports, one console line each (qemu.FormatResult).
const (
	driverListening = "fault-driver" // it reads commands
	peReady         = "pe-ready"     // its PE printed "ready" (checked in)
	peExit          = "pe-exit"      // its PE ended; the detail is a peEnd
)

// peEnd is how a PE in a machine ended, as its driver reports it.
type peEnd struct {
	Exit   int              `json:"exit"` // -1: killed by a signal
	Stdout string           `json:"stdout"`
	Stderr string           `json:"stderr"` // its end, when long (a panic's stacks)
	Report *pereport.Report `json:"report"` // its failure's (pereport.Env)
}

// peReport is where the driver's PE writes its report.
const peReport = "/pe-report.json"

// guestRole runs this binary's role in a machine and exits, when it has
// one (TestMain calls it first).
func guestRole() {
	if len(os.Args) != 2 {
		return
	}
	switch os.Args[1] {
	case driverRole:
		os.Exit(faultDriver())
	case peRole:
		spmd.Main(faulttrial.Program)
	}
}

// faultDriver serves the host's commands, one a line on its standard
// input (the console): "run KIND TIMEOUT CHECKIN" starts a PE of the
// program with that fault ("none": none) and those waits; "signal NAME"
// signals it; "quit" ends the driver.
func faultDriver() int {
	// The console echoes what the host types, which would break into the
	// reports' lines.
	if tio, err := unix.IoctlGetTermios(0, unix.TCGETS); err == nil {
		tio.Lflag &^= unix.ECHO
		unix.IoctlSetTermios(0, unix.TCSETS, tio)
	}
	d := &driver{}
	d.report(driverListening, "")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 4 && f[0] == "run":
			d.run(f[1], f[2], f[3])
		case len(f) == 2 && f[0] == "signal":
			d.signal(f[1])
		case len(f) == 1 && f[0] == "quit":
			return 0
		}
	}
	return 1
}

// driver runs one PE at a time.
type driver struct {
	mu sync.Mutex // one report line at a time; pe
	pe *exec.Cmd
}

func (d *driver) report(name, detail string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Println(qemu.FormatResult(name, nil, detail))
}

func (d *driver) run(kind, timeout, checkin string) {
	if kind == "none" {
		kind = ""
	}
	os.Remove(peReport) // the last run's
	cmd := exec.Command("/proc/self/exe", peRole)
	cmd.Env = append(os.Environ(), faulttrial.EnvFault+"="+kind, spmd.EnvTimeout+"="+timeout, spmd.EnvCheckIn+"="+checkin, pereport.Env+"="+peReport)
	stdout := &readyWatcher{ready: func() { d.report(peReady, "") }}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		d.report(peExit, endDetail(peEnd{Exit: -1, Stderr: err.Error()}))
		return
	}
	d.mu.Lock()
	d.pe = cmd
	d.mu.Unlock()
	go func() {
		cmd.Wait()
		e := peEnd{Exit: cmd.ProcessState.ExitCode(), Stdout: stdout.buf.String(), Stderr: tail(stderr.String(), 2000)}
		var err error
		if e.Report, err = pereport.Read(peReport); err != nil {
			e.Stderr += "\nthe driver: " + err.Error()
		}
		d.report(peExit, endDetail(e))
	}()
}

func (d *driver) signal(name string) {
	sig := unix.SignalNum(name)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pe != nil && sig != 0 {
		d.pe.Process.Signal(sig)
	}
}

func endDetail(e peEnd) string {
	js, _ := json.Marshal(e)
	return string(js)
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

// readyWatcher keeps a PE's standard output and calls ready once it has
// said "ready".
type readyWatcher struct {
	buf   bytes.Buffer
	ready func()
	said  bool
}

func (w *readyWatcher) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if !w.said && bytes.Contains(w.buf.Bytes(), []byte("ready")) {
		w.said = true
		w.ready()
	}
	return len(p), nil
}

// The host's side.

// driverReport is one driver report as the host received it.
type driverReport struct {
	name, detail string
	at           time.Time
}

// machine is the host's end of one machine's driver.
type machine struct {
	in      *io.PipeWriter
	reports chan driverReport
}

// reports sorts the consoles' lines ("pe<k>| ...") to the machines'
// drivers and keeps them all for the log.
type reports struct {
	machines []*machine
	log      testenv.Buffer
	line     []byte
}

// Write takes the consoles' output; hil writes whole lines, one machine's
// at a time.
func (r *reports) Write(p []byte) (int, error) {
	r.log.Write(p)
	for _, c := range p {
		if c != '\n' {
			r.line = append(r.line, c)
			continue
		}
		var k int
		if _, err := fmt.Sscanf(string(r.line), "pe%d|", &k); err == nil && k >= 0 && k < len(r.machines) {
			for _, res := range qemu.ParseResults(r.line) {
				select {
				case r.machines[k].reports <- driverReport{res.Name, res.Detail, time.Now()}:
				default: // nobody reads them any more: the test has failed
				}
			}
		}
		r.line = r.line[:0]
	}
	return len(p), nil
}

// cluster is four machines running drivers, on one board served in dir.
type cluster struct {
	t        *testing.T
	dir      string
	machines []*machine
	timeout  time.Duration
}

func (c *cluster) send(k int, format string, args ...any) {
	fmt.Fprintf(c.machines[k].in, format+"\n", args...)
}

// change changes the board's faults through its faults file, as papersctl
// emu fault does.
func (c *cluster) change(changes ...string) {
	if _, err := ppdevfs.ChangeFaults(c.dir, changes...); err != nil {
		c.t.Fatal(err)
	}
}

// await waits until machine k reports name, dropping other reports, and
// returns it; ok is false past the deadline.
func (c *cluster) await(k int, name string, deadline time.Time) (driverReport, bool) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		select {
		case r := <-c.machines[k].reports:
			if r.name == name {
				return r, true
			}
		case <-timer.C:
			return driverReport{}, false
		}
	}
}

// drain drops the reports of runs that are over (a PE's "ready" that
// nobody waited for).
func (c *cluster) drain() {
	for _, m := range c.machines {
		for len(m.reports) > 0 {
			<-m.reports
		}
	}
}

// start starts a PE with fault kind and PAPERS_TIMEOUT timeout in each
// machine, the k-th after k*stagger.
func (c *cluster) start(kind string, timeout, stagger time.Duration) {
	c.drain()
	for k := range c.machines {
		if k > 0 {
			time.Sleep(stagger)
		}
		c.send(k, "run %s %v 20s", kind, timeout)
	}
}

// end waits for machine k's PE to end; one still running at the deadline
// is killed (hung). A machine whose PE does not end even then fails the
// test: its driver is lost. stderr is the end of what the PE printed there.
func (c *cluster) end(k int, deadline time.Time) (o faulttrial.Outcome, stderr string, hung bool) {
	r, ok := c.await(k, peExit, deadline)
	if !ok {
		hung = true
		c.send(k, "signal SIGKILL")
		if r, ok = c.await(k, peExit, time.Now().Add(time.Minute)); !ok {
			c.t.Fatalf("machine %d: its PE did not end after SIGKILL", k)
		}
	}
	var e peEnd
	if err := json.Unmarshal([]byte(r.detail), &e); err != nil {
		c.t.Fatalf("machine %d: bad report %q: %v", k, r.detail, err)
	}
	return faulttrial.Outcome{Stdout: e.Stdout, Report: e.Report, Exit: e.Exit, Ended: r.at}, e.Stderr, hung
}

// trial runs one trial of a fault, as package spmd's TestFaultTrials does
// on processes, and adds what it found to tl.
func (c *cluster) trial(kind string, tl *faulttrial.Tally) {
	n := len(c.machines)
	if kind == "stuck" {
		c.change(faulttrial.StuckLine)
	}
	c.start(kind, c.timeout, 0)
	t0 := time.Now()
	// Check-in's wait, then the failure's, and the console's way back.
	deadline := t0.Add(3*c.timeout + 30*time.Second)
	switch kind {
	case "SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP", "unplug":
		for k := range n {
			if _, ok := c.await(k, peReady, time.Now().Add(30*time.Second)); !ok {
				c.t.Errorf("%s: machine %d's PE did not check in", kind, k)
			}
		}
		time.Sleep(50 * time.Millisecond)
		t0 = time.Now()
		if kind == "unplug" {
			c.change(faulttrial.Unplug)
		} else {
			c.send(faulttrial.Victim, "signal %s", kind)
		}
		deadline = t0.Add(4*c.timeout + 2*time.Second)
	}
	var outs []faulttrial.Outcome
	var said []string // the survivors' stderr, for the log
	hung := 0
	for k := range n {
		if k == faulttrial.Victim {
			continue
		}
		o, stderr, h := c.end(k, deadline)
		outs, said = append(outs, o), append(said, stderr)
		if h {
			hung++
		}
	}
	if kind == "SIGSTOP" || kind == "unplug" {
		// The victim cannot end by itself: kill it once the others have
		// failed, as a person would.
		c.send(faulttrial.Victim, "signal SIGKILL")
	}
	v, _, h := c.end(faulttrial.Victim, deadline.Add(time.Minute))
	if h {
		hung++
	}
	if kind == "error" || kind == "panic" || kind == "return" {
		t0 = v.Ended
	}
	if testing.Verbose() {
		c.t.Logf("%s: PE 0 exit %d: %s", kind, outs[0].Exit, strings.TrimSpace(tail(said[0], 300)))
	}
	c.change(faulttrial.Replug, faulttrial.Repair)
	tl.Add(kind, n, t0, outs, hung)
}

// clean runs the program without a fault on the same board, in the same
// boots, with PAPERS_TIMEOUT timeout: every PE must check in and print the
// right sum.
func (c *cluster) clean(timeout time.Duration, staggered bool) (bool, string) {
	var stagger time.Duration
	if staggered {
		stagger = 300 * time.Millisecond
	}
	c.start("none", timeout, stagger)
	deadline := time.Now().Add(3*stagger + 30*time.Second + 3*timeout)
	ok, why := true, ""
	for k := range c.machines {
		o, stderr, hung := c.end(k, deadline)
		if o.Exit != 0 || hung || !strings.Contains(o.Stdout, faulttrial.RightSum(len(c.machines))) {
			ok = false
			why += fmt.Sprintf("PE %d: exit %d, stdout %q, stderr %q; ", k, o.Exit, o.Stdout, stderr)
		}
	}
	return ok, why
}

// TestFaultTrials is package spmd's TestFaultTrials in QEMU machines: four
// machines with Debian's kernel on one emulated board, each PE the trials'
// program on its machine's port at 0x378; PE 1's machine makes the fault —
// its program errs, panics or returns, its driver signals it, or the board
// pulls its cable or sticks its D3 mid-run through the board's faults file —
// and the survivors' messages are counted by faulttrial.Tally. After every
// trial the program runs again, in the same boots, its PEs started together
// or one every 300 ms, and must work. CI runs one trial of each fault; the
// full run (docs/spmd.md, "Faults on a real board"):
//
//	PAPERS_FAULT_TRIALS=20 go test ./hil -run TestFaultTrials -v -timeout 120m
func TestFaultTrials(t *testing.T) {
	testenv.SlowUnderRace(t, "booting 4 machines that run the fault trials over the board")
	trials, kinds, err := faulttrial.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	bin := requireHIL(t)
	prog := filepath.Join(t.TempDir(), "faults.test")
	if err := qemu.BuildStaticTest(context.Background(), ".", ".", prog); err != nil {
		t.Fatal(err)
	}
	const n = 4
	work := t.TempDir()
	c := &cluster{t: t, dir: filepath.Join(t.TempDir(), "board"), timeout: 2 * time.Second}
	out := &reports{}
	for range n {
		m := &machine{reports: make(chan driverReport, 256)}
		c.machines = append(c.machines, m)
		out.machines = append(out.machines, m)
	}
	ins := make([]*io.PipeReader, n)
	for k, m := range c.machines {
		ins[k], m.in = io.Pipe()
	}
	done := make(chan struct{})
	var res *hil.Result
	var runErr error
	go func() {
		defer close(done)
		res, runErr = hil.Run(context.Background(), hil.Config{
			N: n, Binary: bin, Program: prog, Args: []string{driverRole}, BoardDir: c.dir, WorkDir: work,
			Input:  func(k int) io.Reader { return ins[k] },
			Output: out,
			// Booting, then each trial's two runs.
			Timeout: 5*time.Minute + time.Duration(trials*len(kinds))*time.Minute,
		})
	}()
	defer func() {
		for _, m := range c.machines {
			m.in.Close()
		}
		<-done
		if t.Failed() {
			t.Logf("consoles:\n%s", out.log.String())
		}
	}()
	for k := range n {
		if _, ok := c.await(k, driverListening, time.Now().Add(5*time.Minute)); !ok {
			for _, m := range c.machines {
				m.in.Close()
			}
			<-done
			t.Fatalf("machine %d's driver did not start (run: %v)", k, runErr)
		}
	}
	// A first run, not counted, with a generous timeout: the first
	// operations of a program just started in a TCG machine can take
	// longer than the trials' timeout while QEMU translates its code.
	if ok, why := c.clean(10*time.Second, false); !ok {
		t.Errorf("the first run after the boot failed: %s", why)
	}
	booted := time.Now()
	tallies := map[string]*faulttrial.Tally{}
	for _, kind := range kinds {
		tl := &faulttrial.Tally{}
		tallies[kind] = tl
		for trial := range trials {
			c.trial(kind, tl)
			if ok, why := c.clean(c.timeout, trial%2 == 1); ok {
				tl.NextOK++
			} else {
				t.Errorf("%s, trial %d: the next run failed: %s", kind, trial, why)
			}
		}
		t.Logf("%s done: %+v", kind, *tl)
	}
	t.Logf("trials took %v after the boot", time.Since(booted).Round(time.Second))
	for k := range n {
		c.send(k, "quit")
	}
	<-done
	if runErr != nil {
		t.Fatal(runErr)
	}
	assertClean(t, work)
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Errorf("the board's directory %s, made by the run, is still there (%v)", c.dir, err)
	}
	for _, m := range res.Machines {
		if m.Exit != 0 || m.Err != nil {
			t.Errorf("machine %d: driver exit %d, %v", m.PE, m.Exit, m.Err)
		}
	}
	t.Logf("%d PEs in QEMU machines (port I/O at 0x378, Debian's kernel) on one emulated board, PAPERS_TIMEOUT=%v, victim PE %d, %d trials each:", n, c.timeout, faulttrial.Victim, trials)
	faulttrial.Table(t.Logf, n, kinds, tallies)
	for _, kind := range kinds {
		for _, p := range tallies[kind].Problems(kind, n) {
			t.Error(p)
		}
	}
}
