package hil_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// requireHIL skips the test, naming what to install, when QEMU, FUSE or the
// guest kernel is missing, and returns a static papersctl built once.
func requireHIL(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("boots QEMU machines; skipped with -short")
	}
	testenv.Long(t, "boots QEMU machines")
	if _, err := qemu.FindQEMU(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	testenv.FUSE(t)
	if _, err := qemu.FindKernel(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ttlpapers-hil-test-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		binPath = filepath.Join(dir, "papersctl")
		buildErr = hil.BuildPapersctl(context.Background(), ".", binPath, nil)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

var (
	buildOnce       sync.Once
	binDir, binPath string
	buildErr        error
)

func TestMain(m *testing.M) {
	guestRole()
	code := leakcheck.Run(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// run runs machines and checks that they leave nothing behind: no QEMU
// process, no mount and no file.
func run(t *testing.T, cfg hil.Config) *hil.Result {
	t.Helper()
	return runAll(t, cfg)[0]
}

// runAll runs several configurations at once, each on its own board, and
// checks that none leaves anything behind. Booting is CPU-bound but the
// guests spend most of a run waiting on the board's FUSE round trips, so
// on two cores concurrent runs finish well before sequential ones would.
func runAll(t *testing.T, cfgs ...hil.Config) []*hil.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res := make([]*hil.Result, len(cfgs))
	errs := make([]error, len(cfgs))
	outs := make([]testenv.Buffer, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		cfgs[i].WorkDir = t.TempDir()
		cfgs[i].Output = &outs[i]
		wg.Go(func() { res[i], errs[i] = hil.Run(ctx, cfgs[i]) })
	}
	wg.Wait()
	for i, cfg := range cfgs {
		if errs[i] != nil {
			t.Fatalf("run %d (faults %v): %v\n%s", i, cfg.Faults, errs[i], outs[i].String())
		}
		t.Logf("%d machines, faults %v: %v wall\n%s", cfg.N, cfg.Faults, res[i].Wall.Round(time.Millisecond), res[i].Summary())
		assertClean(t, cfg.WorkDir)
	}
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			for i := range cfgs {
				t.Logf("consoles of run %d (faults %v):\n%s", i, cfgs[i].Faults, outs[i].String())
			}
		}
	})
	return res
}

func assertClean(t *testing.T, dir string) {
	t.Helper()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the run left %d entries in %s (first: %s)", len(left), dir, left[0].Name())
	}
	if mounts, err := os.ReadFile("/proc/mounts"); err == nil && bytes.Contains(mounts, []byte(dir)) {
		t.Errorf("a mount under %s is left in /proc/mounts", dir)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if cmd, err := os.ReadFile(p); err == nil && bytes.Contains(cmd, []byte(dir)) {
			t.Errorf("process %s is still running: %s", filepath.Dir(p), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		}
	}
}

// TestTeardownWhenGuestHangs gives the machines less time than a boot
// takes: they are killed, and the run still cleans up.
func TestTeardownWhenGuestHangs(t *testing.T) {
	bin := requireHIL(t)
	res := run(t, hil.Config{N: 2, Args: []string{"help"}, Binary: bin, Timeout: 2 * time.Second})
	for _, m := range res.Machines {
		if m.Err == nil || !strings.Contains(m.Err.Error(), "did not power off") {
			t.Errorf("pe%d: error %v, want a timeout", m.PE, m.Err)
		}
	}
	if res.OK() {
		t.Error("a run whose machines were killed reports OK")
	}
}

// TestExitStatus checks that each machine's command status comes back:
// an unknown subcommand exits 2.
func TestExitStatus(t *testing.T) {
	bin := requireHIL(t)
	res := run(t, hil.Config{N: 1, Args: []string{"no-such-command"}, Binary: bin, Timeout: 2 * time.Minute})
	if m := res.Machines[0]; m.Exit != 2 || m.Err != nil {
		t.Errorf("unknown command: exit %d, error %v; want exit 2 and no error", m.Exit, m.Err)
	}
}

// TestDemoCluster runs the SPMD demo (barrier, NAND, broadcast, vote, max,
// sum) on four machines, each doing ioperm and inb/outb on port 0x378.
func TestDemoCluster(t *testing.T) {
	bin := requireHIL(t)
	const n = 4
	res := run(t, hil.Config{N: n, Binary: bin, Timeout: 4 * time.Minute,
		Args: []string{"demo", "--port", "0x378", "--pe", spmd.PESpec, "--pes", hil.PEsPlaceholder, "--bench", "200"}})
	for _, m := range res.Machines {
		if m.Exit != 0 || m.Err != nil {
			t.Errorf("pe%d: exit %d, %v\n%s", m.PE, m.Exit, m.Err, m.Console)
			continue
		}
		if !bytes.Contains(m.Console, []byte("all correct")) {
			t.Errorf("pe%d did not report its results:\n%s", m.PE, m.Console)
		}
		// 200 barriers alone are 400 port operations.
		if m.Ioctls < 400 {
			t.Errorf("pe%d: the board served only %d port operations", m.PE, m.Ioctls)
		}
	}
	if !res.OK() {
		t.Error("result not OK")
	}
}

func TestSubstitute(t *testing.T) {
	got := hil.Substitute([]string{"selftest", "--pe", "{pe}", "--pes={pes}", "x{pe}{pes}"}, 2, 4)
	want := []string{"selftest", "--pe", "2", "--pes=4", "x24"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Substitute = %q, want %q", got, want)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	for _, cfg := range []hil.Config{
		{N: 0, Args: []string{"help"}, Binary: "x"},
		{N: 33, Args: []string{"help"}, Binary: "x"},
		{N: 1, Binary: "x"},
		{N: 1, Args: []string{"help"}},
	} {
		if _, err := hil.Run(context.Background(), cfg); err == nil || errors.Is(err, qemu.ErrUnavailable) {
			t.Errorf("Run(%+v): error %v, want a configuration error", cfg, err)
		}
	}
}

// selftestReport is the part of "papersctl selftest --json" the tests read.
type selftestReport struct {
	Pass    bool   `json:"pass"`
	Backend string `json:"backend"`
	Mode    string `json:"mode"`
	PE      int    `json:"pe"`
	PEs     int    `json:"pes"`
	Checks  []struct {
		Name   string   `json:"name"`
		Status string   `json:"status"`
		Detail string   `json:"detail"`
		Line   string   `json:"line"`
		Pin    int      `json:"pin"`
		Lines  []string `json:"lines"`
		Pins   []int    `json:"pins"`
		PEs    []int    `json:"pes"`
	} `json:"checks"`
	Latency *struct {
		Ops  int     `json:"ops"`
		OpNS float64 `json:"op_ns"`
	} `json:"latency"`
}

// report decodes the selftest's JSON report from a machine's console.
func report(t *testing.T, m hil.Machine) selftestReport {
	t.Helper()
	var r selftestReport
	i := bytes.Index(m.Console, []byte("\n{"))
	if i < 0 {
		t.Fatalf("pe%d printed no JSON report (exit %d, %v):\n%s", m.PE, m.Exit, m.Err, m.Console)
	}
	if err := json.NewDecoder(bytes.NewReader(m.Console[i+1:])).Decode(&r); err != nil {
		t.Fatalf("pe%d: decoding its JSON report: %v\n%s", m.PE, err, m.Console)
	}
	return r
}

// failures lists a report's failed checks, for messages.
func (r selftestReport) failures() string {
	var b strings.Builder
	for _, c := range r.Checks {
		if c.Status == "fail" {
			fmt.Fprintf(&b, "\n  %s: %s [line %q pin %d lines %v pins %v pes %v]", c.Name, c.Detail, c.Line, c.Pin, c.Lines, c.Pins, c.PEs)
		}
	}
	return b.String()
}

// names reports whether a failed check names line (and its DB-25 pin),
// alone or among the lines that read alike.
func names(line string, pin int, checkLine string, checkPin int, lines []string, pins []int) bool {
	if checkLine == line && checkPin == pin {
		return true
	}
	for i, l := range lines {
		if l == line && i < len(pins) && pins[i] == pin {
			return true
		}
	}
	return false
}

// singleFaults are faults single-PC mode can localise: data, control and
// status lines (two of them read like another line and are reported with
// it) and the cable.
var singleFaults = []string{"PE0.D2=stuck0", "PE0.D6=stuck1", "PE0.nStrobe=stuck0", "PE0.nAck=stuck1", "PE0.Busy=stuck0", "PE0=unplugged"}

// TestSelftestSingle runs the unmodified binary's single-PC selftest, with
// direct I/O on 0x378, against a healthy board and against one board per
// injected fault, all machines at once. The healthy board passes; each
// faulty one fails, and every failed check names the faulty line and its
// DB-25 pin (the cable for an unplugged one), as the emulated selftest does.
func TestSelftestSingle(t *testing.T) {
	bin := requireHIL(t)
	args := []string{"selftest", "--port", "0x378", "--json", "--no-prompt"}
	cfgs := []hil.Config{{N: 1, Binary: bin, Args: args, Timeout: 3 * time.Minute}}
	for _, f := range singleFaults {
		cfgs = append(cfgs, hil.Config{N: 1, Binary: bin, Args: args, Timeout: 3 * time.Minute, Faults: []string{f}})
	}
	start := time.Now()
	results := runAll(t, cfgs...)
	t.Logf("%d single machines at once: %v", len(cfgs), time.Since(start).Round(time.Millisecond))

	m := results[0].Machines[0]
	healthy := report(t, m)
	if m.Exit != 0 || !healthy.Pass || healthy.Mode != "single" || healthy.Backend != "port:0x378" {
		t.Errorf("healthy board: exit %d, pass %v, mode %q, backend %q:%s", m.Exit, healthy.Pass, healthy.Mode, healthy.Backend, healthy.failures())
	}
	if l := healthy.Latency; l == nil || l.Ops == 0 || l.OpNS <= 0 {
		t.Errorf("healthy board: no port-operation latency in the report: %+v", l)
	} else {
		// QEMU drops data writes that repeat the register's value (the
		// latency loop rewrites the idle value), so the board served fewer
		// ioctls than the guest made operations.
		t.Logf("port-operation latency in the guest: %.1f µs over %d operations; the whole selftest made %d ioctls",
			l.OpNS/1000, l.Ops, m.Ioctls)
	}

	for i, s := range singleFaults {
		t.Run(s, func(t *testing.T) {
			f, err := emu.ParseFault(s)
			if err != nil {
				t.Fatal(err)
			}
			line, pin := f.Line.Name, f.Line.Pin
			if f.Kind == emu.Unplugged {
				line, pin = "cable", 0
			}
			m := results[i+1].Machines[0]
			r := report(t, m)
			if m.Exit != 1 || r.Pass {
				t.Fatalf("exit %d, pass %v: want the selftest to fail:%s", m.Exit, r.Pass, r.failures())
			}
			diagnoses := 0
			for _, c := range r.Checks {
				if c.Status != "fail" {
					continue
				}
				if !names(line, pin, c.Line, c.Pin, c.Lines, c.Pins) || len(c.PEs) != 1 || c.PEs[0] != 0 {
					t.Errorf("check %q names line %q pin %d (lines %v pins %v) on PEs %v; want %s, pin %d, on PE 0", c.Name, c.Line, c.Pin, c.Lines, c.Pins, c.PEs, line, pin)
				}
				if strings.HasPrefix(c.Name, "diagnosis:") {
					diagnoses++
				}
			}
			if diagnoses != 1 {
				t.Errorf("%d diagnosis rows, want 1:%s", diagnoses, r.failures())
			}
		})
	}
}

// clusterSelftest is the multi-PC selftest every machine runs.
var clusterSelftest = []string{"selftest", "--port", "0x378", "--pe", spmd.PESpec, "--pes", hil.PEsPlaceholder, "--json", "--no-prompt"}

// TestSelftestCluster runs the multi-PC selftest on four machines at once
// against one healthy board: every machine passes, and the driver's
// operations cost what docs/protocol.md says when nobody is late.
func TestSelftestCluster(t *testing.T) {
	bin := requireHIL(t)
	res := run(t, hil.Config{N: 4, Binary: bin, Args: clusterSelftest, Timeout: 4 * time.Minute})
	for _, m := range res.Machines {
		r := report(t, m)
		if m.Exit != 0 || m.Err != nil || !r.Pass || r.Mode != "multi-pc" || r.PE != m.PE || r.PEs != 4 {
			t.Errorf("pe%d: exit %d (%v), pass %v, mode %q, pe %d of %d:%s", m.PE, m.Exit, m.Err, r.Pass, r.Mode, r.PE, r.PEs, r.failures())
		}
		if r.Latency != nil {
			t.Logf("pe%d: %.1f µs per port operation with four machines running", m.PE, r.Latency.OpNS/1000)
		}
	}
}

// TestSelftestClusterFaults runs the multi-PC selftest on four machines
// whose board has PE 2's D1 stuck at 0, and on four whose board has PE 1's
// cable unplugged (both boards at once). With D1 held low the NAND's bit 1
// reads 1 for every PE, so every machine fails and names D1 (pin 3); with
// PE 1 unplugged, the others fail their check-in naming PE 1.
func TestSelftestClusterFaults(t *testing.T) {
	bin := requireHIL(t)
	cfg := func(fault string) hil.Config {
		return hil.Config{N: 4, Binary: bin, Args: clusterSelftest, Timeout: 4 * time.Minute, Faults: []string{fault}}
	}
	results := runAll(t, cfg("PE2.D1=stuck0"), cfg("PE1=unplugged"))

	d1 := lineNamed(t, "D1")
	for _, m := range results[0].Machines {
		r := report(t, m)
		named := false
		for _, c := range r.Checks {
			named = named || c.Status == "fail" && names(d1.Name, d1.Pin, c.Line, c.Pin, c.Lines, c.Pins)
		}
		if m.Exit != 1 || r.Pass || !named {
			t.Errorf("PE2.D1=stuck0: pe%d exit %d, pass %v, D1 (pin %d) named: %v:%s", m.PE, m.Exit, r.Pass, d1.Pin, named, r.failures())
		}
	}
	for _, m := range results[1].Machines {
		r := report(t, m)
		named := m.PE == 1 // PE 1 itself only sees the others never arrive
		for _, c := range r.Checks {
			named = named || c.Status == "fail" && strings.Contains(c.Detail, "PE 1 did not answer")
		}
		if m.Exit != 1 || r.Pass || !named {
			t.Errorf("PE1=unplugged: pe%d exit %d, pass %v, PE 1 named: %v:%s", m.PE, m.Exit, r.Pass, named, r.failures())
		}
	}
}

func lineNamed(t *testing.T, name string) lpt.Line {
	t.Helper()
	for _, l := range lpt.Lines {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no line %s in lpt.Lines", name)
	return lpt.Line{}
}
