// Package selftest checks a TTL_PAPERS board and the driver line by line,
// and says what is broken: which port line, which DB-25 pin, which chip pin
// on the board, and the likely cause.
//
// It runs on the embedded emulator (no hardware needed; faults can be
// injected) or on a real printer port, in one of three modes:
//
//   - cluster: the emulator drives every PE's port itself, from one
//     goroutine, register by register (the wiring probe), then runs the
//     driver's primitives with every PE in-process;
//   - single-PC: one port alone on the board, every other cable unplugged
//     (the default on a real port);
//   - multi-PC: every PC runs selftest at once with its own PE id, and the
//     cluster's barrier, NAND and interrupt paths are exercised through
//     the driver.
//
// The wiring probe is a fixed sequence of register writes and reads. The
// diagnosis replays the same sequence on emulated boards, one per fault in
// a catalogue (every line of every PE stuck at 0 or 1, every cable
// unplugged, every port's data lines undriven), and reports the faults
// whose predicted readings match what was read. Faults that read exactly
// like a healthy board in a mode are reported as not checkable, never
// silently passed.
package selftest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/field"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Mode selects what a selftest drives.
type Mode string

const (
	// Cluster drives every PE of an emulated board (emulator only).
	Cluster Mode = "cluster"
	// Single drives one port alone on the board, other cables unplugged.
	Single Mode = "single"
	// MultiPC runs on one PC of a cluster whose PCs all run selftest at once.
	MultiPC Mode = "multi-pc"
)

// DefaultTimeout is the default per-wait timeout, on the emulator and on
// real ports: long enough for a healthy wait on a busy PC (at load 31 on 2
// cores, 200 ms failed the emulator's check-in), short enough that a fault,
// which stalls a few waits, costs seconds (10 to 16 s for a stuck line or
// an unplugged PE at 5 s, against 3 to 6 s at 200 ms).
const DefaultTimeout = 5 * time.Second

// MultiPCCheckIn is the default check-in wait in multi-PC mode.
const MultiPCCheckIn = time.Minute

// Config says what to test.
type Config struct {
	// Port is the real port to test; nil means the embedded emulator.
	Port lpt.Port
	// Backend names the port in the report ("port:0x378"); Emulator (or
	// empty) is the emulator. A Backend other than that, with Port not yet
	// opened, is enough for Validate to check a configuration for a real
	// port.
	Backend string
	Mode    Mode // default: Cluster on the emulator, Single on a real port
	PEs     int  // PEs in the cluster (default 4); the board is the smallest that holds them
	PE      int  // this PC's PE id (multi-PC), or the connector its cable is on (single-PC)
	// Faults are injected into the emulated board (emulator only).
	Faults []emu.Fault
	// Timeout bounds each wait; zero means DefaultTimeout.
	Timeout time.Duration
	// CheckInTimeout bounds each session's wait for the other PEs to
	// arrive. Zero means MultiPCCheckIn in multi-PC mode, where people
	// start selftest on each PC by hand and the PCs' checks take
	// different times, and Timeout otherwise.
	CheckInTimeout time.Duration
	// AskLED, when set, asks a person which colour an LED shows (real
	// ports). Without it, faults on the LED lines are not checkable.
	AskLED func(pe int, question string) (lpt.LED, error)
	// LatencyOps is the number of port operations timed (default 20000).
	LatencyOps int
	// Record, when set, is called with the emulated board once it is
	// built, and returns a wrapper for every port selftest then drives on
	// it: papersctl selftest --vcd records the run through it.
	Record func(b *emu.Board) (wrap func(pe int, p lpt.Port) lpt.Port)
	wrap   func(pe int, p lpt.Port) lpt.Port
}

// traced is PE k's emulated port p, wrapped by Record's wrapper if any.
func (cfg Config) traced(pe int, p lpt.Port) lpt.Port {
	if cfg.wrap == nil {
		return p
	}
	return cfg.wrap(pe, p)
}

// Status of a check.
const (
	StatusPass         = "pass"
	StatusFail         = "fail"
	StatusNotCheckable = "not-checkable"
)

// Check is one line of the report. Failed checks name what they diagnosed.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Status string `json:"status"` // pass, fail or not-checkable
	Detail string `json:"detail"`
	// For failures and not-checkable lines: the port line, its DB-25 pin,
	// where it lands on the board (from the hw netlist), the likely cause,
	// the PEs concerned and the catalogue faults that match.
	Line string `json:"line,omitempty"`
	Pin  int    `json:"pin,omitempty"`
	// When faults on different lines read alike, Line joins their names
	// and Lines and Pins list each (Pin is the first's).
	Lines    []string `json:"lines,omitempty"`
	Pins     []int    `json:"pins,omitempty"`
	Chip     string   `json:"chip,omitempty"`
	Cause    string   `json:"cause,omitempty"`
	PEs      []int    `json:"pes,omitempty"`
	Suspects []string `json:"suspects,omitempty"`
	// MayHide lists, for a diagnosis of one fault, the catalogue faults
	// that could be there too, unseen: with the diagnosed fault present
	// they read exactly the same as without.
	MayHide []string `json:"may_hide,omitempty"`
}

// Latency is the measured cost of one port operation and the barrier and
// NAND times it predicts.
type Latency struct {
	Ops       int     `json:"ops"`
	OpNS      float64 `json:"op_ns"`
	BarrierNS float64 `json:"barrier_ns"` // 2 operations
	NANDNS    float64 `json:"nand_ns"`    // 5 operations
}

// Report is the result of a selftest.
type Report struct {
	Pass     bool              `json:"pass"`
	Backend  string            `json:"backend"`
	Mode     Mode              `json:"mode"`
	PEs      int               `json:"pes"`
	PE       int               `json:"pe"`
	Injected []string          `json:"injected,omitempty"`
	Checks   []Check           `json:"checks"`
	PortOps  map[string]uint64 `json:"port_ops,omitempty"`
	Latency  *Latency          `json:"latency,omitempty"`
	Notes    []string          `json:"notes,omitempty"`
}

func (r *Report) add(c Check) {
	if c.Status == "" {
		c.Status = StatusFail
		if c.Pass {
			c.Status = StatusPass
		}
	}
	c.Pass = c.Status != StatusFail
	r.Checks = append(r.Checks, c)
}

// Failed returns the failed checks.
func (r *Report) Failed() []Check {
	var f []Check
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			f = append(f, c)
		}
	}
	return f
}

// Run runs a selftest. Its error is for a configuration that cannot run;
// everything found on the board is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	if cfg.Port == nil && cfg.real() {
		return nil, fmt.Errorf("selftest: Backend %q names a real port but Port is nil: open the port (lpt/backend.Open) and give it", cfg.Backend)
	}
	cfg = cfg.withDefaults()
	size, _ := hw.SizeFor(cfg.PEs) // Validate checked it
	real := cfg.Port != nil
	var err error
	rep := &Report{Backend: cfg.Backend, Mode: cfg.Mode, PEs: cfg.PEs, PE: cfg.PE, PortOps: map[string]uint64{}}
	h := hw.MustNew(size)
	var board *emu.Board
	if !real {
		if board, err = cfg.emulatedBoard(rep, h); err != nil {
			return nil, err
		}
	}
	var findings []Check
	if cfg.Mode != MultiPC {
		if findings, err = wiring(rep, h, board, cfg); err != nil {
			return nil, err
		}
	}
	if real {
		portChecks(rep, cfg.Port, cfg.Mode, cfg.LatencyOps)
	} else {
		p, err := board.Port(cfg.PE)
		if err != nil {
			return nil, fmt.Errorf("selftest: %w", err)
		}
		rep.Latency = measureLatency(cfg.traced(cfg.PE, p), cfg.LatencyOps, lpt.Transparent)
		p.Close()
	}
	if rep.Latency != nil {
		l := rep.Latency
		rep.add(Check{Name: "port-operation latency", Pass: true,
			Detail: fmt.Sprintf("%.0f ns per operation over %d operations: predicted barrier %.2f µs (2 ops), NAND %.2f µs (5 ops)", l.OpNS, l.Ops, l.BarrierNS/1000, l.NANDNS/1000)})
	}
	if cfg.Mode != Single {
		runCluster(ctx, rep, h, board, cfg, findings)
	}
	rep.Pass = len(rep.Failed()) == 0
	return rep, nil
}

// Emulator is the Backend of a selftest on the embedded emulator.
const Emulator = "emulator"

// real reports whether cfg tests a real port: one is open (Port), or one
// is named (Backend) before it is opened.
func (cfg Config) real() bool {
	return cfg.Port != nil || cfg.Backend != "" && cfg.Backend != Emulator
}

// withDefaults is cfg with every zero field that has a default filled in.
func (cfg Config) withDefaults() Config {
	real := cfg.real()
	if cfg.PEs == 0 {
		cfg.PEs = 4
	}
	if cfg.Mode == "" {
		cfg.Mode = Cluster
		if real {
			cfg.Mode = Single
		}
	}
	if cfg.Backend == "" {
		cfg.Backend = Emulator
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.CheckInTimeout == 0 {
		cfg.CheckInTimeout = cfg.Timeout
		if cfg.Mode == MultiPC {
			cfg.CheckInTimeout = MultiPCCheckIn
		}
	}
	if cfg.LatencyOps <= 0 {
		cfg.LatencyOps = 20000
	}
	return cfg
}

// Validate reports every problem with cfg (its zero fields taken at their
// defaults) as *field.Error values, joined: a command can check its
// configuration before it opens a port, naming the real one by Backend
// alone.
func (cfg Config) Validate() error {
	real := cfg.real()
	c := cfg.withDefaults()
	var errs []error
	bad := func(name, format string, args ...any) { errs = append(errs, field.Errorf(name, format, args...)) }
	size, err := hw.SizeFor(c.PEs)
	if err != nil {
		bad("PEs", "{PEs} %d: %v", c.PEs, err)
	}
	switch {
	case c.Mode != Cluster && c.Mode != Single && c.Mode != MultiPC:
		bad("Mode", "{Mode} %q: unknown mode: use cluster, single or multi-pc", c.Mode)
	case real && c.Mode == Cluster:
		bad("Mode", "{Mode} cluster drives every PE's port and needs the emulator: drop {Backend}, or use {Mode} single or multi-pc")
	case !real && c.Mode == MultiPC:
		bad("Mode", "{Mode} multi-pc runs on real ports, one PC per PE: give {Backend} (on the emulator, cluster mode runs every PE)")
	}
	if real && len(c.Faults) > 0 {
		bad("Faults", "{Faults} %v: faults go into the emulator only: drop {Faults}, or drop {Backend}", c.Faults[0])
	}
	if real && c.Record != nil {
		bad("Record", "{Record} records the emulator's nets: drop {Record}, or drop {Backend}")
	}
	if cfg.Timeout < 0 {
		bad("Timeout", "{Timeout} %v: need 0 (the default) or more", cfg.Timeout)
	}
	if cfg.CheckInTimeout < 0 {
		bad("CheckInTimeout", "{CheckInTimeout} %v: need 0 (the default) or more", cfg.CheckInTimeout)
	}
	if err == nil {
		switch {
		case c.PE < 0:
			bad("PE", "{PE} %d out of range: PE ids start at 0", c.PE)
		case c.Mode == MultiPC && c.PE >= c.PEs:
			bad("PE", "{PE} %d: with {PEs} %d the PE ids are 0 to %d (out of range)", c.PE, c.PEs, c.PEs-1)
		case c.Mode == Single && c.PE >= size:
			bad("PE", "{PE} %d: the board for %d PEs has connectors 0 to %d (PE out of range)", c.PE, c.PEs, size-1)
		}
		for _, f := range c.Faults {
			if err := f.OnBoard(c.PEs); err != nil {
				bad("Faults", "{Faults} %v: %v", f, err)
			}
		}
	}
	return errors.Join(errs...)
}

// emulatedBoard builds the emulated board of netlist h for cfg: in
// single-PC mode every other cable unplugged, cfg's faults injected (and
// listed in rep), and its recording hooked up.
func (cfg *Config) emulatedBoard(rep *Report, h *hw.Netlist) (*emu.Board, error) {
	board, err := emu.NewFromNetlist(h, cfg.PEs)
	if err != nil {
		return nil, fmt.Errorf("selftest: %w", err)
	}
	if cfg.Mode == Single {
		for k := range h.PEs {
			if k != cfg.PE {
				board.Inject(emu.Fault{PE: k, Kind: emu.Unplugged})
			}
		}
	}
	for _, f := range cfg.Faults {
		if err := board.Inject(f); err != nil {
			return nil, fmt.Errorf("selftest: %w", err)
		}
		rep.Injected = append(rep.Injected, f.String())
	}
	if cfg.Record != nil {
		cfg.wrap = cfg.Record(board)
	}
	return board, nil
}

// wiring runs the wiring probe on the rig of this mode, compares it with
// the healthy prediction, and diagnoses the differences.
func wiring(rep *Report, h *hw.Netlist, board *emu.Board, cfg Config) ([]Check, error) {
	pes := []int{cfg.PE}
	if cfg.Mode == Cluster {
		pes = nil
		for k := range cfg.PEs {
			pes = append(pes, k)
		}
	}
	leds := board != nil || cfg.AskLED != nil
	r, release, err := wiringRig(board, pes, cfg)
	if err != nil {
		return nil, err
	}
	defer release()
	obs, err := probe(r, nil)
	if errors.Is(err, ErrNoAnswer) {
		leds = false // obs holds the readings of the probe without LEDs
		rep.Notes = append(rep.Notes, fmt.Sprintf("LED lines not checked: %v", err))
	} else if err != nil {
		rep.add(Check{Name: "wiring probe", Detail: err.Error(), Line: "all", Cause: "the port failed: " + err.Error()})
		return nil, nil
	}
	sigs := predict(h.PEs, pes, leds)
	if sigs.err != nil {
		return nil, fmt.Errorf("selftest: predicting the wiring probe: %w", sigs.err)
	}
	got := values(obs)
	var findings []Check
	if distance(got, sigs.healthy) != 0 {
		findings = append(findings, sigs.diagnosis(h, pes, leds, got))
	}
	groupChecks(rep, obs, got, sigs.healthy, findings)
	for _, f := range findings {
		rep.add(f)
	}
	notCheckable(rep, h, sigs.invisible(), leds)
	if cfg.Mode == Single {
		var others []int
		for k := range h.PEs {
			if k != cfg.PE {
				others = append(others, k)
			}
		}
		rep.add(Check{Name: fmt.Sprintf("cables of PEs %v", others), Status: StatusNotCheckable, Line: "cable", PEs: others,
			Detail: "single-PC mode tests one cable: run selftest in single-PC mode on each of the other PCs (each alone on the board), or in multi-PC mode"})
	}
	return findings, nil
}

// wiringRig is the rig the wiring probe drives: the emulated board's ports
// of pes (release closes them), or cfg's real port with a person asked
// about its LED.
func wiringRig(board *emu.Board, pes []int, cfg Config) (r rig, release func(), err error) {
	if board == nil {
		r = rig{pes: pes, ports: []lpt.Port{cfg.Port}}
		if cfg.AskLED != nil {
			r.led = func(i int) (lpt.LED, error) {
				return cfg.AskLED(pes[i], fmt.Sprintf("Which colour is the LED for PE %d (connector %s) now?", pes[i], hw.ConnectorRef(pes[i])))
			}
		}
		return r, func() {}, nil
	}
	or, err := claimRig(board, pes, true)
	if err != nil {
		return rig{}, nil, fmt.Errorf("selftest: %w", err)
	}
	r = or.rig
	for i, p := range r.ports {
		r.ports[i] = cfg.traced(pes[i], p)
	}
	return r, or.close, nil
}

// groupChecks adds one check per group of readings, carrying the diagnosis
// when one of its readings is off.
func groupChecks(rep *Report, obs []reading, got, healthy []uint8, findings []Check) {
	var groups []string
	bad := map[string]string{}
	for i, o := range obs {
		if !slices.Contains(groups, o.group) {
			groups = append(groups, o.group)
		}
		if got[i] != healthy[i] && bad[o.group] == "" {
			bad[o.group] = fmt.Sprintf("after %q, PE %d read %s, expected %s", o.what, o.pe, o.describe(got[i]), o.describe(healthy[i]))
		}
	}
	for _, g := range groups {
		c := Check{Name: g, Pass: bad[g] == "", Detail: "every reading as expected"}
		if !c.Pass {
			c = withFinding(findings[0], g, bad[g])
		}
		rep.add(c)
	}
}

// withFinding is a failed check named name, carrying a diagnosis.
func withFinding(f Check, name, detail string) Check {
	f.Name, f.Detail, f.Status, f.Pass = name, detail+" — "+f.Name, StatusFail, false
	return f
}

// notCheckable reports, line by line, the faults this mode cannot see.
func notCheckable(rep *Report, h *hw.Netlist, hs []hypothesis, leds bool) {
	type key struct{ line string }
	var order []key
	byLine := map[key][]hypothesis{}
	for _, x := range hs {
		k := key{x.line}
		if byLine[k] == nil {
			order = append(order, k)
		}
		byLine[k] = append(byLine[k], x)
	}
	for _, k := range order {
		xs := byLine[k]
		c := Check{Status: StatusNotCheckable, Line: k.line, Pin: xs[0].pin}
		var kinds, chips []string
		for _, x := range xs {
			c.Suspects = append(c.Suspects, x.String())
			if !slices.Contains(c.PEs, x.pe) {
				c.PEs = append(c.PEs, x.pe)
				if l, err := lpt.LineByName(x.line); err == nil {
					chips = append(chips, h.Trace(x.pe, l))
				}
			}
			if !slices.Contains(kinds, x.kind) {
				kinds = append(kinds, x.kind)
			}
		}
		c.Chip = strings.Join(chips, "; ")
		c.Name = fmt.Sprintf("%s (DB-25 pin %d) %s on PEs %v", k.line, c.Pin, strings.Join(kinds, "/"), c.PEs)
		c.Detail = invisibleReason(k.line, leds)
		c.Cause = c.Detail
		rep.add(c)
	}
}

// portChecks checks that a real port answers and measures its latency. In
// multi-PC mode the other PCs may be checking in already, and the board
// reads this port's strobes and data lines in their barriers and NANDs:
// nothing here may raise a strobe (S0 or S1) that is low, which would
// complete their barriers, nor pull a data line low, which a NAND they
// just completed would read (as this PC voting in their check-in).
func portChecks(rep *Report, p lpt.Port, mode Mode, ops int) {
	readback(rep, p, mode)
	idle := uint8(lpt.Transparent)
	if mode == MultiPC {
		idle = lpt.DataMask // not started: the others' check-in waits for this PC
	}
	rep.Latency = measureLatency(p, ops, idle)
}

// readback checks that a port answers: the data register must read back
// what was written (an absent port reads 0xff; a port in input mode reads
// the floating lines); the register's value is restored. The two patterns
// set and clear each of the six lines beside the strobes, which are kept
// as they are; in multi-PC mode only the two LED lines (see portChecks).
func readback(rep *Report, p lpt.Port, mode Mode) {
	var bad []string
	old := p.ReadData()
	keep, a, b, kept := old&lpt.Strobes, uint8(0x15), uint8(0x2a), "the strobes kept as found"
	if mode == MultiPC {
		keep, a, b, kept = old&^(lpt.LG|lpt.LR), lpt.LG, lpt.LR, "only the LED lines moved"
	}
	for _, v := range []uint8{keep | a, keep | b, old} {
		p.WriteData(v)
		if got := p.ReadData(); got != v {
			bad = append(bad, fmt.Sprintf("wrote %#02x, read back %#02x", v, got))
		}
	}
	p.WriteControl(0)
	c := Check{Name: "port answers (data register readback)", Pass: len(bad) == 0,
		Detail: fmt.Sprintf("%#02x, %#02x and %#02x read back (%s)", keep|a, keep|b, old, kept)}
	if err := p.Err(); err != nil {
		bad = append(bad, err.Error())
		c.Pass = false
	}
	if !c.Pass {
		c.Detail = strings.Join(bad, "; ")
		c.Line, c.Pin = "D0-D7", lineNamed("D0").Pin
		c.Cause = "no port at this address, or the port is in ECP/EPP/bidirectional mode (set SPP/normal in the BIOS), or the backend failed"
	}
	rep.add(c)
}

// measureLatency times n port operations (alternating a data write of a
// value that leaves the board as it is and a status read).
func measureLatency(p lpt.Port, n int, idle uint8) *Latency {
	start := time.Now()
	for i := 0; i < n; i += 2 {
		p.WriteData(idle)
		p.ReadStatus()
	}
	op := float64(time.Since(start).Nanoseconds()) / float64(n)
	return &Latency{Ops: n, OpNS: op, BarrierNS: 2 * op, NANDNS: 5 * op}
}
