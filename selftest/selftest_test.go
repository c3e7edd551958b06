package selftest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// jsonCheck is a check as the JSON report carries it.
type jsonCheck struct {
	MayHide  []string `json:"may_hide"`
	Name     string   `json:"name"`
	Pass     bool     `json:"pass"`
	Status   string   `json:"status"`
	Detail   string   `json:"detail"`
	Line     string   `json:"line"`
	Pin      int      `json:"pin"`
	Lines    []string `json:"lines"`
	Pins     []int    `json:"pins"`
	Chip     string   `json:"chip"`
	Cause    string   `json:"cause"`
	PEs      []int    `json:"pes"`
	Suspects []string `json:"suspects"`
}

type jsonReport struct {
	Pass    bool              `json:"pass"`
	Backend string            `json:"backend"`
	PEs     int               `json:"pes"`
	Checks  []jsonCheck       `json:"checks"`
	PortOps map[string]uint64 `json:"port_ops"`
}

// runReport runs a selftest and decodes its JSON form, so tests assert on
// what users of --json see.
func runReport(cfg Config) (jsonReport, error) {
	var j jsonReport
	if cfg.Timeout == 0 {
		cfg.Timeout = faultWait
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		return j, err
	}
	b, err := json.Marshal(rep)
	if err == nil {
		err = json.Unmarshal(b, &j)
	}
	return j, err
}

func runJSON(t *testing.T, cfg Config) jsonReport {
	t.Helper()
	r, err := runReport(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func dump(r jsonReport) string {
	var b strings.Builder
	for _, c := range r.Checks {
		if c.Status != StatusPass {
			fmt.Fprintf(&b, "\n  %s %s: %s [line %q pin %d pes %v]", c.Status, c.Name, c.Detail, c.Line, c.Pin, c.PEs)
		}
	}
	return b.String()
}

// mustPass is the per-wait timeout of runs that must pass: no healthy wait
// comes near it, but faultWait was overrun under the race detector on a
// loaded 2-CPU machine (CI, with other jobs), failing a harmless fault's
// run.
const mustPass = 2 * time.Second

// faultWait is the per-wait timeout of the runs that look for faults
// (runReport's default): each stalls a few waits, and with DefaultTimeout
// the hundreds of fault runs would take many minutes.
const faultWait = 200 * time.Millisecond

func TestHealthyBoardPasses(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
		t.Run(fmt.Sprintf("%dPEs", n), func(t *testing.T) {
			t.Parallel()
			r := runJSON(t, Config{PEs: n, Timeout: mustPass})
			if !r.Pass || r.Backend != "emulator" || r.PEs != n {
				t.Fatalf("pass=%v backend=%q pes=%d:%s", r.Pass, r.Backend, r.PEs, dump(r))
			}
			if r.PortOps["barrier"] != 2 || r.PortOps["nand"] != 5 {
				t.Errorf("port_ops %v: want barrier 2, nand 5", r.PortOps)
			}
			for _, c := range r.Checks {
				if c.Status == StatusFail {
					t.Errorf("healthy board failed %q: %s", c.Name, c.Detail)
				}
				if c.Status == StatusNotCheckable && c.Line != "nSelectIn" && c.Name != "leave and rejoin" && c.Name != "stalled PE" {
					t.Errorf("healthy emulated board: unexpected not-checkable %q: %s", c.Name, c.Detail)
				}
			}
		})
	}
}

// catalogueFaults is every line of every PE stuck at 0 and at 1, and every
// PE unplugged.
func catalogueFaults(pes []int) []emu.Fault {
	var fs []emu.Fault
	for _, pe := range pes {
		for _, l := range lpt.Lines {
			fs = append(fs, emu.Fault{PE: pe, Line: l, Kind: emu.Stuck0}, emu.Fault{PE: pe, Line: l, Kind: emu.Stuck1})
		}
		fs = append(fs, emu.Fault{PE: pe, Kind: emu.Unplugged})
	}
	return fs
}

// wantLine is the line and pin a diagnosis of f must name.
func wantLine(f emu.Fault) (string, int) {
	if f.Kind == emu.Unplugged {
		return "cable", 0
	}
	return f.Line.Name, f.Line.Pin
}

// assertDiagnosed checks that a report names the fault: every failed check
// names its line and pin and includes its PE, and the diagnosis lists it.
// With exact, the line must be the only one named.
// A fault on nSelectIn, which the board does not use, must pass and be
// reported as not checkable.
func assertDiagnosed(t *testing.T, f emu.Fault, r jsonReport, exact bool) {
	t.Helper()
	line, pin := wantLine(f)
	if line == "nSelectIn" {
		if !r.Pass {
			t.Fatalf("a fault on the unused nSelectIn line failed the selftest:%s", dump(r))
		}
		if !slices.ContainsFunc(r.Checks, func(c jsonCheck) bool {
			return c.Status == StatusNotCheckable && c.Line == line && c.Pin == pin && slices.Contains(c.PEs, f.PE)
		}) {
			t.Fatalf("nSelectIn not reported as not checkable:%s", dump(r))
		}
		return
	}
	if r.Pass {
		t.Fatalf("fault %v not detected:%s", f, dump(r))
	}
	diagnoses := 0
	for _, c := range r.Checks {
		if c.Status != StatusFail {
			continue
		}
		named := c.Line == line && c.Pin == pin
		if !exact && len(c.Lines) > 0 {
			// Single-PC mode: a line may read like another (D0 stuck at 0
			// and nError stuck at 1 both make NAND bit 0 read 1).
			i := slices.Index(c.Lines, line)
			named = i >= 0 && c.Pins[i] == pin
		}
		if !named || !slices.Contains(c.PEs, f.PE) || c.Chip == "" || c.Cause == "" {
			t.Errorf("check %q names line %q pin %d PEs %v (chip %q), want line %q pin %d PE %d", c.Name, c.Line, c.Pin, c.PEs, c.Chip, line, pin, f.PE)
		}
		if strings.HasPrefix(c.Name, "diagnosis:") {
			diagnoses++
			if !slices.Contains(c.Suspects, f.String()) {
				t.Errorf("diagnosis %q suspects %v, not %v", c.Name, c.Suspects, f)
			}
		}
	}
	if diagnoses != 1 {
		t.Errorf("%d diagnosis checks, want 1:%s", diagnoses, dump(r))
	}
}

// runAll runs one selftest per fault, several at a time: most of a faulty
// run is spent waiting for per-check timeouts, not computing.
func runAll(t *testing.T, faults []emu.Fault, cfg Config) []jsonReport {
	t.Helper()
	reports := make([]jsonReport, len(faults))
	errs := make([]error, len(faults))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, f := range faults {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			c := cfg
			c.Faults = []emu.Fault{f}
			reports[i], errs[i] = runReport(c)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%v: %v", faults[i], err)
		}
	}
	return reports
}

// TestFaultCatalogue injects each fault of the catalogue into the 4-PE
// board and checks that the cluster-mode selftest diagnoses it.
func TestFaultCatalogue(t *testing.T) {
	testenv.Long(t, "a selftest of every fault in the catalogue")
	// The faults on nSelectIn, which the board does not connect, must
	// pass every driver check within its timeout: they run apart from the
	// others, whose diagnoses (simulations) would take the CPUs from them.
	var seen, unseen []emu.Fault
	for _, f := range catalogueFaults([]int{0, 1, 2, 3}) {
		if f.Line.Name == "nSelectIn" {
			unseen = append(unseen, f)
		} else {
			seen = append(seen, f)
		}
	}
	faults := append(seen, unseen...)
	reports := append(runAll(t, seen, Config{PEs: 4}), runAll(t, unseen, Config{PEs: 4, Timeout: mustPass})...)
	for i, f := range faults {
		t.Run(f.String(), func(t *testing.T) { assertDiagnosed(t, f, reports[i], true) })
	}
}

// TestEveryBoardSize runs the selftest on the netlist of every board a
// builder can order (hw.Sizes; the 16- and 32-PE boards take their cables
// on IDC headers): with every PE a board holds it passes, and with one
// line stuck on the first PE beyond the next smaller board it names that
// line's header or DB-25 pin. (Minutes under the race detector, for the
// 32 PEs: .ci/run runs it without.)
func TestEveryBoardSize(t *testing.T) {
	testenv.SlowUnderRace(t, "a 32-PE selftest")
	d6, err := lpt.LineByName("D6")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range hw.Sizes {
		t.Run(fmt.Sprintf("%dPEs", n), func(t *testing.T) {
			if r := runJSON(t, Config{PEs: n, Timeout: mustPass}); !r.Pass || r.PEs != n {
				t.Fatalf("healthy %d-PE board: pass=%v pes=%d:%s", n, r.Pass, r.PEs, dump(r))
			}
			pes := n
			if i > 0 {
				pes = hw.Sizes[i-1] + 1 // the fewest PEs that take this board: a smaller catalogue to diagnose
			}
			f := emu.Fault{PE: pes - 1, Line: d6, Kind: emu.Stuck0}
			r := runJSON(t, Config{PEs: pes, Faults: []emu.Fault{f}})
			assertDiagnosed(t, f, r, true)
			want := hw.MustNew(n).PortNode(f.PE, d6.Pin)
			if !slices.ContainsFunc(r.Checks, func(c jsonCheck) bool {
				return c.Status == StatusFail && strings.Contains(c.Chip, fmt.Sprintf("%s pin %d ", want.Ref, want.Pin))
			}) {
				t.Errorf("no failed check names %s pin %d, where PE %d's D6 reaches the %d-PE board:%s", want.Ref, want.Pin, f.PE, n, dump(r))
			}
		})
	}
}

// TestFaultCatalogueSingle runs single-PC mode on PE 0 of the 4-PE board:
// PE 0's faults are diagnosed; faults on other cables cannot be seen and
// the report says so.
func TestFaultCatalogueSingle(t *testing.T) {
	faults := catalogueFaults([]int{0, 2})
	reports := runAll(t, faults, Config{PEs: 4, Mode: Single})
	for i, f := range faults {
		t.Run(f.String(), func(t *testing.T) {
			r := reports[i]
			if f.PE == 0 {
				assertDiagnosed(t, f, r, false)
				for _, c := range r.Checks {
					if c.Status == StatusFail && len(c.PEs) != 1 {
						t.Errorf("single-PC mode names PEs %v for %q, want only PE 0", c.PEs, c.Name)
					}
				}
				return
			}
			if !r.Pass || !slices.ContainsFunc(r.Checks, func(c jsonCheck) bool {
				return c.Status == StatusNotCheckable && slices.Contains(c.PEs, f.PE) && c.Line == "cable"
			}) {
				t.Fatalf("a fault on another PE's cable must pass and be reported not checkable:%s", dump(r))
			}
		})
	}
}

// TestMultiPCLateStart runs multi-PC mode on four emulated ports standing in
// for four PCs, one of them started two seconds after the others, as happens
// when a person starts selftest on each PC by hand: the default check-in
// wait covers it although every other wait is bounded by 500 ms.
func TestMultiPCLateStart(t *testing.T) {
	const n = 4
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	reps := make([]jsonReport, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		port, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		port.WriteData(0) // a PC's power-on value: both strobes low
		wg.Go(func() {
			defer port.Close()
			if k == n-1 {
				time.Sleep(2 * time.Second)
			}
			reps[k], errs[k] = runReport(Config{Port: port, Backend: "emulated port", Mode: MultiPC, PEs: n, PE: k, Timeout: 500 * time.Millisecond, LatencyOps: 100})
		})
	}
	wg.Wait()
	for k := range n {
		if errs[k] != nil {
			t.Fatalf("PE %d: %v", k, errs[k])
		}
		checkedIn := false
		for _, c := range reps[k].Checks {
			checkedIn = checkedIn || c.Pass && strings.HasPrefix(c.Name, "check-in")
			// The "costs N port operations when nobody is late" checks
			// need each PC on its own CPU; four goroutines on a loaded
			// 2-core machine are late at random.
			if c.Status == StatusFail && !strings.Contains(c.Name, " costs ") {
				t.Errorf("PE %d: %s failed: %s", k, c.Name, c.Detail)
			}
		}
		if !checkedIn {
			t.Errorf("PE %d: no check-in passed:%s", k, dump(reps[k]))
		}
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{PEs: 33}, "32"},
		{Config{PEs: 4, Mode: MultiPC}, "real ports"},
		{Config{PEs: 4, Mode: "bogus"}, "unknown mode"},
		{Config{PEs: 4, Mode: Single, PE: 4}, "out of range"},
		{Config{PEs: 4, Faults: []emu.Fault{{PE: 5, Kind: emu.Unplugged}}}, "PE 5"},
	} {
		_, err := Run(context.Background(), c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
}

func ExampleRun() {
	rep, err := Run(context.Background(), Config{PEs: 4, Faults: []emu.Fault{{PE: 2, Line: lpt.Lines[1], Kind: emu.Stuck1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rep.Failed() {
		if strings.HasPrefix(c.Name, "diagnosis:") {
			fmt.Printf("%s\nline %s, DB-25 pin %d\n", c.Name, c.Line, c.Pin)
		}
	}
	fmt.Println("pass:", rep.Pass)
	// Output:
	// diagnosis: D0 (DB-25 pin 2, P_D0) stuck at 1 on PE 2
	// line D0, DB-25 pin 2
	// pass: false
}
