package selftest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// A rig is the set of ports one selftest drives directly, register by
// register: every PE's port on the emulator's cluster mode (one goroutine
// drives them all), or this PC's port alone in single-PC mode.
type rig struct {
	pes   []int                        // board connector (PE) of each port
	ports []lpt.Port                   // the ports, in the order of pes
	led   func(i int) (lpt.LED, error) // LED of ports[i]; nil when nobody can see the LEDs
}

// reading is one observation of the wiring probe: a status register (masked
// to its pins) or an LED colour, with the step that produced it.
type reading struct {
	group string // the check it belongs to
	what  string // what had just been done
	pe    int    // board PE that read it
	led   bool   // an LED colour rather than a status byte
	got   uint8
}

// probe runs the wiring sequence on a rig and returns its readings. It is a
// fixed sequence (it never branches on what it reads), so the same sequence
// run on an emulated board with a hypothetical fault predicts exactly what
// that fault would make the rig read: diagnosis compares signatures.
//
// When nobody answers the LED questions (the rig's led function returns
// ErrNoAnswer), probe returns the readings before the LED step, which are
// those of the same probe without LEDs, and an error wrapping ErrNoAnswer.
//
// With want set, probe stops at the first reading that differs from want's
// (the steps after it do nothing), returning the readings up to it: a
// diagnosis that only asks whether a fault gives given readings learns it
// sooner.
func probe(r rig, want []uint8) ([]reading, error) {
	p := &prober{rig: r, want: want}
	p.reset()
	p.dataLines()
	p.readyFlag()
	p.interruptFlag()
	var ledErr error
	if r.led != nil {
		ledErr = p.leds()
	}
	p.park()
	for _, port := range r.ports {
		if err := port.Err(); err != nil {
			return nil, err
		}
	}
	if ledErr != nil && !errors.Is(ledErr, ErrNoAnswer) {
		return nil, ledErr
	}
	return p.out, ledErr
}

// prober runs the steps of the wiring probe on a rig and collects what
// they read.
type prober struct {
	rig
	out  []reading
	want []uint8 // stop at the first reading that differs (nil: never)
	off  bool    // stopped
}

// The two barrier phases with every data line high: S1 (the phase the
// probe starts and ends in) and S0.
const phaseS1, phaseS0 = lpt.S1 | lpt.DataMask, lpt.S0 | lpt.DataMask

func (p *prober) n() int { return len(p.ports) }

func (p *prober) setData(i int, v uint8) {
	if !p.off {
		p.ports[i].WriteData(v)
	}
}

func (p *prober) setControl(i int, v uint8) {
	if !p.off {
		p.ports[i].WriteControl(v)
	}
}

// add records a reading, or stops the probe if it differs from want's.
func (p *prober) add(r reading) {
	if p.off {
		return
	}
	if p.want != nil && (len(p.out) >= len(p.want) || p.want[len(p.out)] != r.got) {
		p.off = true
		return
	}
	p.out = append(p.out, r)
}

// setAll writes data v to every port but except (-1: none).
func (p *prober) setAll(v uint8, except int) { p.each(except, func(i int) { p.setData(i, v) }) }

// controlAll writes control v to every port but except (-1: none).
func (p *prober) controlAll(v uint8, except int) { p.each(except, func(i int) { p.setControl(i, v) }) }

func (p *prober) each(except int, fn func(i int)) {
	for i := range p.n() {
		if i != except {
			fn(i)
		}
	}
}

// snap reads every port's status register: one reading each.
func (p *prober) snap(group, what string) {
	for i, port := range p.ports {
		if !p.off {
			p.add(reading{group, what, p.pes[i], false, port.ReadStatus() & lpt.StatusPins})
		}
	}
}

// name and others say who acts, for the readings' descriptions.
func (p *prober) name(i int) string {
	if p.n() == 1 {
		return "this PE"
	}
	return fmt.Sprintf("PE %d", p.pes[i])
}

func (p *prober) others() string {
	if p.n() == 1 {
		return "(no other PE plugged in)"
	}
	return "every other PE"
}

// reset puts the board in a known state: strobes at S1 preset the ready
// flip-flop; every PE acknowledging (P_NAK=0) clears the interrupt
// flip-flop.
func (p *prober) reset() {
	for i := range p.n() {
		p.setControl(i, lpt.NAK)
		p.setData(i, phaseS1)
	}
	p.controlAll(0, -1)
	p.controlAll(lpt.NAK, -1)
}

// dataLines drives one data line low at a time on one PE, so a line stuck
// high names its PE; all-ones and all-zeros catch stuck NAND outputs and
// stuck inputs at each PC.
func (p *prober) dataLines() {
	nandGroup := "NAND output lines (every PE drives 1111, then 0000)"
	p.snap(nandGroup, "every PE drives 1111")
	for i := range p.n() {
		for b := range 4 {
			p.setData(i, phaseS1&^(1<<b))
			p.snap(dataGroup(p.pes[i], b), fmt.Sprintf("%s drives D%d low alone", p.name(i), b))
			p.setData(i, phaseS1)
		}
	}
	p.setAll(lpt.S1, -1)
	p.snap(nandGroup, "every PE drives 0000")
	p.setAll(phaseS1, -1)
}

// readyFlag has each PE in turn hold both strobes low (late) while the
// others arrive, in both phases: the flag must change only when it
// arrives.
func (p *prober) readyFlag() {
	for i := range p.n() {
		g := barrierGroup(p.pes[i])
		for _, ph := range []struct {
			data        uint8
			name, after string
		}{{phaseS0, "S0", ""}, {phaseS1, "S1", " after S0"}} {
			p.setData(i, lpt.DataMask)
			p.snap(g, p.name(i)+" holds S1=S0=0"+ph.after)
			p.setAll(ph.data, i)
			p.snap(g, p.others()+" at "+ph.name+", "+p.name(i)+" late")
			p.setData(i, ph.data)
			p.snap(g, p.name(i)+" arrives at "+ph.name)
		}
	}
}

// interruptFlag has each PE in turn raise the interrupt: the flag stays
// latched, P_SEL switches Busy between it and the ready flag, and it
// clears only when every PE acknowledges. It runs in phase S0, where the
// ready flag reads 1, unlike an idle interrupt flag, so that a PE whose
// P_SEL is stuck shows it.
func (p *prober) interruptFlag() {
	p.setAll(phaseS0, -1)
	p.controlAll(lpt.SEL|lpt.NAK, -1)
	p.snap("interrupt flag idle (P_SEL=1)", "no interrupt raised")
	for i := range p.n() {
		g := interruptGroup(p.pes[i])
		p.setControl(i, lpt.SEL|lpt.NAK|lpt.IRQ)
		p.snap(g, p.name(i)+" raises P_IRQ")
		p.setControl(i, lpt.SEL|lpt.NAK)
		p.snap(g, p.name(i)+" drops P_IRQ (the flag stays latched)")
		p.controlAll(lpt.NAK, -1)
		p.snap(g, "P_SEL=0: Busy shows the ready flag, not the interrupt")
		p.controlAll(lpt.SEL|lpt.NAK, -1)
		p.controlAll(lpt.SEL, i)
		p.snap(g, p.others()+" acknowledges (P_NAK=0)")
		p.setControl(i, lpt.SEL)
		p.snap(g, p.name(i)+" acknowledges too: the flag clears")
		p.controlAll(lpt.SEL|lpt.NAK, -1)
		p.snap(g, "acknowledge released")
	}
	p.controlAll(lpt.NAK, -1)
}

// leds shows every colour on each PE's LED and reads it through the rig's
// led function (the emulator's LED driver, or a person asked).
func (p *prober) leds() error {
	before := len(p.out)
	for i := range p.n() {
		for _, v := range []uint8{0, lpt.LG, lpt.LR, lpt.LG | lpt.LR} {
			p.setData(i, phaseS1|v)
			if p.off {
				return nil
			}
			c, err := p.led(i)
			if err != nil {
				p.setData(i, phaseS1)
				p.out = p.out[:before]
				return err
			}
			p.add(reading{ledGroup(p.pes[i]), fmt.Sprintf("%s drives D4=%d D5=%d", p.name(i), v>>4&1, v>>5&1), p.pes[i], true, uint8(c)})
		}
		p.setData(i, phaseS1)
	}
	return nil
}

// park leaves every port transparent with control 0.
func (p *prober) park() {
	for i := range p.n() {
		p.setData(i, lpt.Transparent)
		p.setControl(i, 0)
	}
}

func dataGroup(pe, bit int) string {
	l := lineNamed(fmt.Sprintf("D%d", bit))
	return fmt.Sprintf("PE %d %s (pin %d) through the NAND", pe, l.Name, l.Pin)
}
func barrierGroup(pe int) string {
	return fmt.Sprintf("ready flip-flop waits for PE %d (S0 and S1)", pe)
}
func interruptGroup(pe int) string {
	return fmt.Sprintf("interrupt raised by PE %d, acknowledged by all", pe)
}
func ledGroup(pe int) string { return fmt.Sprintf("PE %d LED colours (D4 green, D5 red)", pe) }

func lineNamed(name string) lpt.Line {
	l, err := lpt.LineByName(name)
	if err != nil {
		panic(err) // names here are constants
	}
	return l
}

// describe renders a reading for a failure detail.
func (r reading) describe(v uint8) string {
	if r.led {
		return lpt.LED(v).String()
	}
	return fmt.Sprintf("NAND %04b, Busy bit %d", v>>lpt.InputShift&lpt.DataMask, v>>7)
}

// A hypothesis is one fault the diagnosis considers: a single stuck line,
// an unplugged cable, or a port whose data lines are not driven.
type hypothesis struct {
	pe     int
	line   string // "" for an unplugged cable
	pin    int
	kind   string // "stuck0", "stuck1", "unplugged", "undriven"
	faults []emu.Fault
}

func (h hypothesis) String() string {
	switch h.kind {
	case "unplugged":
		return fmt.Sprintf("PE%d=unplugged", h.pe)
	case "undriven":
		return fmt.Sprintf("PE%d.D0-D7=undriven", h.pe)
	}
	return fmt.Sprintf("PE%d.%s=%s", h.pe, h.line, h.kind)
}

// catalogue lists every hypothesis for the given PEs: each of the 17 lines
// stuck at 0 and at 1, the cable unplugged, and the data lines undriven (a
// port left in ECP, EPP or bidirectional input mode).
func catalogue(pes []int) []hypothesis {
	var hs []hypothesis
	for _, pe := range pes {
		for _, l := range lpt.Lines {
			for _, k := range []emu.FaultKind{emu.Stuck0, emu.Stuck1} {
				hs = append(hs, hypothesis{pe, l.Name, l.Pin, k.String(), []emu.Fault{{PE: pe, Line: l, Kind: k}}})
			}
		}
		hs = append(hs, hypothesis{pe: pe, kind: "unplugged", faults: []emu.Fault{{PE: pe, Kind: emu.Unplugged}}})
		u := hypothesis{pe: pe, line: "D0-D7", kind: "undriven"}
		for _, l := range lpt.Lines {
			if l.Reg == lpt.Data {
				u.faults = append(u.faults, emu.Fault{PE: pe, Line: l, Kind: emu.Stuck1})
			}
		}
		hs = append(hs, u)
	}
	return hs
}

// rigShape is what determines a probe's readings on a healthy board.
type rigShape struct {
	size int    // board size
	pes  string // rig PEs, e.g. "0,1,2,3"
	leds bool
}

// signatures holds the predicted readings of a rig shape: healthy and under
// each hypothesis.
type signatures struct {
	healthy []uint8
	hyps    []hypothesis
	sigs    [][]uint8
	err     error

	hideMu sync.Mutex
	hides  map[int]*hideEntry // by hypothesis: the faults it hides (masked)
}

var (
	sigMu    sync.Mutex
	sigCache = map[rigShape]*sigEntry{}
)

type sigEntry struct {
	once sync.Once
	s    *signatures
}

// predict returns the signatures for a rig shape, simulating each
// hypothesis on the emulator once per process (in parallel).
func predict(size int, pes []int, leds bool) *signatures {
	key := rigShape{size, fmt.Sprint(pes), leds}
	sigMu.Lock()
	e := sigCache[key]
	if e == nil {
		e = &sigEntry{}
		sigCache[key] = e
	}
	sigMu.Unlock()
	e.once.Do(func() { e.s = computeSignatures(size, pes, leds) })
	return e.s
}

func computeSignatures(size int, pes []int, leds bool) *signatures {
	h, err := hw.New(size)
	if err != nil {
		return &signatures{err: err}
	}
	s := &signatures{hyps: catalogue(pes)}
	if s.healthy, err = simulate(h, pes, leds, nil, nil); err != nil {
		return &signatures{err: err}
	}
	s.sigs = make([][]uint8, len(s.hyps))
	errs := make([]error, len(s.hyps))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				s.sigs[i], errs[i] = simulate(h, pes, leds, s.hyps[i].faults, nil)
			}
		})
	}
	for i := range s.hyps {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return &signatures{err: err}
		}
	}
	return s
}

// simulate runs the probe on an emulated board with only the rig's cables
// plugged in and the given faults injected, and returns the values read —
// with want set, only up to the first that differs from want's (probe).
func simulate(h *hw.Netlist, pes []int, leds bool, faults []emu.Fault, want []uint8) ([]uint8, error) {
	b, r, err := emulatedRig(h, pes, leds)
	if err != nil {
		return nil, err
	}
	defer r.close()
	for _, f := range faults {
		if err := b.Inject(f); err != nil {
			return nil, err
		}
	}
	rs, err := probe(r.rig, want)
	if err != nil {
		return nil, err
	}
	return values(rs), nil
}

type openRig struct {
	rig
	close func()
}

// emulatedRig builds an emulated board with exactly the rig's PEs plugged
// in and claims their ports.
func emulatedRig(h *hw.Netlist, pes []int, leds bool) (*emu.Board, openRig, error) {
	b, err := emu.NewFromNetlist(h, h.PEs)
	if err != nil {
		return nil, openRig{}, err
	}
	for k := range h.PEs {
		if !slices.Contains(pes, k) {
			if err := b.Inject(emu.Fault{PE: k, Kind: emu.Unplugged}); err != nil {
				return nil, openRig{}, err
			}
		}
	}
	r, err := claimRig(b, pes, leds)
	return b, r, err
}

// claimRig claims the ports of the given PEs on an emulated board.
func claimRig(b *emu.Board, pes []int, leds bool) (openRig, error) {
	r := openRig{rig: rig{pes: pes}}
	release := func() {
		for _, p := range r.ports {
			p.Close()
		}
	}
	for _, k := range pes {
		p, err := b.Port(k)
		if err != nil {
			release()
			return openRig{}, err
		}
		r.ports = append(r.ports, p)
	}
	if leds {
		r.led = func(i int) (lpt.LED, error) { return b.LED(pes[i]), nil }
	}
	r.close = release
	return r, nil
}

func values(rs []reading) []uint8 {
	v := make([]uint8, len(rs))
	for i, r := range rs {
		v[i] = r.got
	}
	return v
}

// diagnosis is the failed check that explains readings obs of a rig
// that differ from a healthy board's: the single faults that give them,
// with the faults each could be hiding; else the pairs of faults that
// give them; else the closest single faults.
func (s *signatures) diagnosis(h *hw.Netlist, pes []int, leds bool, obs []uint8) Check {
	ms, exact := s.diagnose(obs)
	hs := make([]hypothesis, len(ms))
	for i, m := range ms {
		hs[i] = s.hyps[m]
	}
	f := finding(h, hs, exact)
	if exact {
		hidden, complete := s.masked(h, pes, leds, ms)
		mayHide(&f, hidden, complete)
	} else if pairs := s.diagnosePairs(h, pes, leds, obs); len(pairs) > 0 {
		f = pairFinding(h, pairs)
	}
	return f
}

// diagnose returns the indexes of the hypotheses whose predicted readings
// equal the observed ones; when none does, of the closest ones (fewest
// differing readings) and exact=false.
func (s *signatures) diagnose(obs []uint8) (matches []int, exact bool) {
	best := -1
	for i, sig := range s.sigs {
		d := distance(sig, obs)
		switch {
		case best < 0 || d < best:
			best, matches = d, []int{i}
		case d == best:
			matches = append(matches, i)
		}
	}
	return matches, best == 0
}

// invisible returns the hypotheses that read exactly like a healthy board.
func (s *signatures) invisible() []hypothesis {
	var hs []hypothesis
	for i, sig := range s.sigs {
		if distance(sig, s.healthy) == 0 {
			hs = append(hs, s.hyps[i])
		}
	}
	return hs
}

func distance(a, b []uint8) int {
	if len(a) != len(b) {
		return max(len(a), len(b))
	}
	d := 0
	for i := range a {
		if a[i] != b[i] {
			d++
		}
	}
	return d
}

// finding turns a set of matching hypotheses into the fields of a failed
// check: the line, its DB-25 pin, where it lands on the board, and the
// likely cause.
func finding(h *hw.Netlist, hs []hypothesis, exact bool) Check {
	c := Check{Status: StatusFail}
	var names []string
	pes := map[int]bool{}
	for _, x := range hs {
		names = append(names, x.String())
		pes[x.pe] = true
	}
	first := hs[0]
	sameLine := true
	for _, x := range hs {
		sameLine = sameLine && x.line == first.line && x.kind == first.kind
	}
	for pe := range h.PEs {
		if pes[pe] {
			c.PEs = append(c.PEs, pe)
		}
	}
	chips := suspectChips(h, hs)
	c.Suspects = names
	c.Line, c.Pin = first.line, first.pin
	if first.kind == "unplugged" {
		c.Line = "cable"
	}
	if !sameLine {
		// Faults on different lines that read alike: name them all.
		for _, x := range hs {
			if x.line != "" && !slices.Contains(c.Lines, x.line) {
				c.Lines = append(c.Lines, x.line)
				c.Pins = append(c.Pins, x.pin)
			}
		}
		c.Line = strings.Join(c.Lines, " or ")
	}
	c.Chip = strings.Join(chips, "; or ")
	c.Cause = cause(first)
	who := fmt.Sprintf("PE %d", first.pe)
	if len(pes) > 1 {
		who = fmt.Sprintf("one of PEs %v (they cannot be told apart from these readings: run single-PC mode on each PC to find which)", c.PEs)
	}
	switch {
	case !exact:
		c.Name = "diagnosis: no single fault explains the readings"
		c.Cause = "several faults at once, or a fault outside the catalogue (e.g. a dead chip); closest single faults: " + strings.Join(names, ", ") + " — " + c.Cause
	case !sameLine:
		c.Name = "diagnosis: " + strings.Join(names, " or ")
	case first.kind == "unplugged":
		c.Name = fmt.Sprintf("diagnosis: %s's cable is not connected", who)
	case first.kind == "undriven":
		c.Name = fmt.Sprintf("diagnosis: %s does not drive its data lines", who)
	default:
		l := lineNamed(first.line)
		c.Name = fmt.Sprintf("diagnosis: %s (DB-25 pin %d, %s) stuck at %s on %s", l.Name, l.Pin, l.Signal, first.kind[len(first.kind)-1:], who)
	}
	c.Detail = "these readings match " + strings.Join(names, ", ")
	if !exact {
		c.Detail = "no single fault or pair of faults gives these readings; the closest single faults: " + strings.Join(names, ", ")
	}
	return c
}

// suspectChips names where each hypothesis's fault would be: the chips and
// traces of its line (every data line for one not driven, the connector for
// an unplugged cable), each place once.
func suspectChips(h *hw.Netlist, hs []hypothesis) []string {
	var chips []string
	for _, x := range hs {
		var where string
		switch x.kind {
		case "unplugged":
			where = fmt.Sprintf("%s (PE %d's cable connector)", hw.ConnectorRef(x.pe), x.pe)
		case "undriven":
			where = h.Trace(x.pe, lineNamed("D0")) + " … " + h.Trace(x.pe, lineNamed("D7"))
		default:
			where = h.Trace(x.pe, lineNamed(x.line))
		}
		if !slices.Contains(chips, where) {
			chips = append(chips, where)
		}
	}
	return chips
}

// cause says what usually makes a line read the way a hypothesis says.
func cause(h hypothesis) string {
	switch h.kind {
	case "unplugged":
		return "cable unplugged or not seated at one end, PC switched off, wrong cable (a LapLink/null-printer or IEEE-1284 cable with crossed lines), or the port disabled in the BIOS"
	case "undriven":
		return "port in the wrong mode: ECP, EPP or bidirectional input mode leaves the data lines undriven — set the port to SPP/normal in the BIOS; or a cable with the data lines open"
	}
	l := lineNamed(h.line)
	if l.Output() {
		if h.kind == "stuck1" {
			s := "open wire: the board's input floats high (broken wire, bent connector pin, cable without this line, wrong cable), or a short to VCC"
			if l.Reg == lpt.Data {
				s += "; if several data lines show this, the port is in ECP/EPP/bidirectional mode"
			}
			return s
		}
		return "short to ground (solder bridge to a ground pin 18-25, pinched cable), or the PC's output driver is dead"
	}
	if h.kind == "stuck1" {
		return "open wire: the PC's input floats high (broken wire, bent connector pin, cable without this line, wrong cable), a short to VCC, or the board's driver chip for this line not powered"
	}
	return "short to ground (solder bridge to a ground pin 18-25, pinched cable), or the board's driver chip output held low"
}

// invisibleReason says why a fault on a line cannot be seen in a mode.
func invisibleReason(line string, leds bool) string {
	switch line {
	case "nSelectIn":
		return "the board does not connect nSelectIn (reserved): a fault there is harmless and cannot be seen"
	case "D4", "D5":
		if !leds {
			return "not checkable without a person confirming the LED colours (run on a terminal, with the prompts on)"
		}
	}
	return "reads exactly like a healthy board in this mode: not checkable without the other mode (single-PC or cluster)"
}
