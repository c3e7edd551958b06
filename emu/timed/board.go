// Package timed is the TTL_PAPERS board in simulated time. A Board runs
// the circuit package emu/netlist compiles for the untimed board (package
// emu) — the same gates, nets and drivers, each gate's logic from
// hw.Func.Eval — as an event-driven simulation: every gate output changes
// its part's propagation delay after its inputs (inertial: a pulse shorter
// than the delay is swallowed), every line of every printer cable adds its
// propagation delay, skew and the slow edges of a driver loaded by long
// cables (see Cable), and the PCs' port operations take the time of their
// port hardware, in simulated-time order (see Board.Ports). Package timing
// shows the seed's two NAND races with it (docs/timing.md). With NoDelay
// and ideal cables it settles exactly as the untimed board does
// (TestTimedZeroDelayMatchesUntimed).
//
// Why two evaluators. The timed board is one event queue, as in MAME's
// netlist, and zero delay is just delay 0; the untimed board does not use
// it, and the reason is not speed per operation — on one core a write and
// settle costs about the same here (BenchmarkZeroDelayWriteSettle: 289,
// 301 and 313 ns for 4, 8 and 32 PEs, against 336, 353 and 615 ns for
// emu's BenchmarkWriteSettle in the same run). It is concurrency. A timed
// run has one simulated clock, so its PEs take turns under one lock; the
// untimed board has no lock at all: every PE evaluates the board in a
// private copy from a snapshot of the published registers, and the
// flip-flops advance by compare-and-swap, so that PEs in separate
// processes on a board in shared memory run at once, and a PE killed at
// any instruction holds nobody up. One queue under one lock would give
// that up.
package timed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/netlist"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Corner selects each gate's propagation delay from its part's datasheet
// figures (hw.Delay).
type Corner uint8

const (
	Typical Corner = iota // every gate at its typical delay
	Fastest               // every gate at its minimum
	Slowest               // every gate at its guaranteed maximum
	Spread                // each gate drawn uniformly from minimum to maximum (seeded)
	NoDelay               // no delay: the untimed model's instant settle
)

var cornerNames = [...]string{"typ", "min", "max", "spread", "zero"}

func (c Corner) String() string {
	if int(c) >= len(cornerNames) {
		return fmt.Sprintf("Corner(%d)", uint8(c))
	}
	return cornerNames[c]
}

// ParseCorner parses "typ", "min", "max", "spread" or "zero".
func ParseCorner(s string) (Corner, error) {
	if i := slices.Index(cornerNames[:], strings.ToLower(s)); i >= 0 {
		return Corner(i), nil
	}
	return 0, fmt.Errorf("timed: delay corner %q: use typ, min, max, spread (each gate at random between min and max) or zero", s)
}

// Config configures a timed board.
type Config struct {
	// PEs is the number of cables plugged in, connectors 0 to PEs-1 (1 to
	// 32); the board is the smallest that holds them.
	PEs int
	// Delays picks each gate's propagation delay.
	Delays Corner
	// Cable models the printer cables; the zero value is ideal wires.
	Cable Cable
	// PowerUp is the Q output of each 74LS74 half at power-up, in the
	// order FlipFlops names them; nil draws them at random from Seed, as a
	// real board powers up in either state.
	PowerUp []bool
	// Seed seeds every random choice: delays under Spread, cable skews,
	// power-up states.
	Seed uint64
}

// Board is an emulated board in simulated time. Its PEs run through
// the ports Ports returns; its methods are safe for concurrent use.
type Board struct {
	mu      sync.Mutex // guards everything below while a run is on
	h       *hw.Netlist
	pes     int
	nets    []tnet
	gates   []tgate
	drvNet  []int32
	drv     []tstate
	level   []bool
	dff     []hw.DFFState
	ports   []tport
	pcIn    []tstate        // PC-side status inputs, index k*len(lpt.Lines)+line
	inNet   []int32         // the net each reads, -1 for none
	inWait  []time.Duration // their delays from the board
	ffs     []int32         // the flip-flop gates
	ffName  []string
	powered []bool // the flip-flops' Q at power-up
	q       eventQueue
	now     time.Duration
	zero    bool // the power-up settle: every delay is zero
	rec     *Recording
	cosim   *cosim
}

// tstate is a driver's or a PC input's state: the level it has (cur), the
// one it is heading for (proj), and the generation of its pending event.
// Bit 0 is "driving", bit 1 the level.
type tstate struct {
	cur, proj uint8
	gen       uint32
}

const (
	on   = 1
	high = 2
)

func drive(driving, level bool) uint8 {
	var s uint8
	if driving {
		s |= on
	}
	if level {
		s |= high
	}
	return s
}

type tgate struct {
	fn                   hw.Func
	in                   []int32 // DFF: D, CLK, nPRE, nCLR
	en                   int32
	enLow                bool
	out, outN            int32
	delay, clock, enable time.Duration
}

type tnet struct {
	name    string
	drivers []int32
	loads   []int32
	pcIns   []int32 // the plugged PCs' status inputs on this net
}

// tport is one PE's port: its registers, the pins they drive, and the
// lines of its cable into the board.
type tport struct {
	plugged       bool
	data, control uint8
	pins          lpt.Pins // the PC-driven pins, at the PC
	outs          []tline
}

// tline is a PC-driven line the board connects: its driver on the board
// side of the cable, and the cable's delay for each edge.
type tline struct {
	line       int // index in lpt.Lines
	driver     int32
	rise, fall time.Duration
}

// New builds a timed board for cfg.PEs PEs on the smallest board that
// holds them.
func New(cfg Config) (*Board, error) {
	size, err := hw.SizeFor(cfg.PEs)
	if err != nil {
		return nil, err
	}
	return NewFromNetlist(hw.MustNew(size), cfg)
}

// NewFromNetlist builds a timed board for the given netlist with the
// first cfg.PEs cables plugged in, and powers it up: every PC's registers
// read 0, and the board settles from the flip-flop states of cfg.PowerUp.
func NewFromNetlist(h *hw.Netlist, cfg Config) (*Board, error) {
	if cfg.PEs < 1 || cfg.PEs > h.PEs {
		return nil, fmt.Errorf("timed: %d PEs do not fit the %d-PE board: use 1 to %d", cfg.PEs, h.PEs, h.PEs)
	}
	if cfg.Delays > NoDelay {
		return nil, fmt.Errorf("timed: unknown delay corner %d", cfg.Delays)
	}
	if err := cfg.Cable.check(cfg.PEs); err != nil {
		return nil, err
	}
	b := &Board{h: h, pes: cfg.PEs}
	b.adapt(netlist.Compile(h), cfg)
	if cfg.PowerUp != nil && len(cfg.PowerUp) != len(b.ffs) {
		return nil, fmt.Errorf("timed: %d power-up states for %d flip-flops (%s): give one Q level each, or none for random", len(cfg.PowerUp), len(b.ffs), strings.Join(b.ffName, ", "))
	}
	b.wire(cfg.Cable, rand.New(rand.NewPCG(cfg.Seed, 2)))
	q := cfg.PowerUp
	if q == nil {
		rng := rand.New(rand.NewPCG(cfg.Seed, 3))
		for range b.ffs {
			q = append(q, rng.IntN(2) == 1)
		}
	}
	b.powerUp(q)
	return b, nil
}

// adapt takes what the timed simulation needs from the compiled
// circuit, and gives each gate its delays. The gates come in the
// order netlist.Compile makes them: each component's units in turn.
func (b *Board) adapt(c *netlist.Circuit, cfg Config) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	pick := func(d hw.Delay) time.Duration {
		switch cfg.Delays {
		case Fastest:
			return d.Min
		case Slowest:
			return d.Max
		case Spread:
			return d.Min + time.Duration(rng.Int64N(int64(d.Max-d.Min)+1))
		case NoDelay:
			return 0
		}
		return d.Typ
	}
	var parts []*hw.Component
	var units []int
	for _, comp := range b.h.Components {
		for u := range comp.Part.Units {
			parts, units = append(parts, comp), append(units, u)
		}
	}
	if len(parts) != len(c.Gates) {
		panic(fmt.Sprintf("timed: netlist.Compile made %d gates for %d units", len(c.Gates), len(parts)))
	}
	for i, g := range c.Gates {
		p := parts[i].Part
		b.gates = append(b.gates, tgate{fn: g.Fn, in: g.In, en: g.En, enLow: g.EnLow, out: g.Out, outN: g.OutN,
			delay: pick(p.Delay), clock: pick(p.ClockDelay), enable: pick(p.EnableDelay)})
		if g.Fn == hw.FuncDFF {
			b.ffs = append(b.ffs, int32(i))
			b.ffName = append(b.ffName, flipFlopName(parts[i], units[i], c, g))
		}
	}
	for _, n := range c.Nets {
		b.nets = append(b.nets, tnet{name: n.Name, drivers: n.Drivers, loads: n.Loads})
	}
	for _, d := range c.Drivers {
		b.drvNet = append(b.drvNet, d.Net)
	}
	b.drv = make([]tstate, len(c.Drivers))
	b.level = make([]bool, len(c.Nets))
	b.dff = make([]hw.DFFState, len(c.Gates))
	b.adaptPorts(c, cfg.PEs)
	b.drv[c.VCC] = tstate{cur: on | high, proj: on | high}
	b.drv[c.GND] = tstate{cur: on, proj: on}
}

// adaptPorts takes each connector's cable lines from the compiled netlist;
// the first pes are plugged in.
func (b *Board) adaptPorts(c *netlist.Circuit, pes int) {
	b.pcIn = make([]tstate, len(c.Connectors)*len(lpt.Lines))
	b.inWait = make([]time.Duration, len(b.pcIn))
	b.inNet = make([]int32, len(b.pcIn))
	for i := range b.inNet {
		b.inNet[i] = -1
	}
	for k, p := range c.Connectors {
		tp := tport{plugged: k < pes}
		for _, cl := range p.Outputs {
			tp.outs = append(tp.outs, tline{line: lineIndex(cl.Line), driver: cl.Driver})
		}
		for _, cl := range p.Inputs {
			i := int32(k*len(lpt.Lines) + lineIndex(cl.Line))
			b.inNet[i] = cl.Net
			if cl.Net >= 0 && tp.plugged {
				b.nets[cl.Net].pcIns = append(b.nets[cl.Net].pcIns, i)
			}
		}
		b.ports = append(b.ports, tp)
	}
}

// flipFlopName says which 74LS74 half a flip-flop gate is and what it
// drives: "U3 half 1 (Q: RDYQ)".
func flipFlopName(comp *hw.Component, unit int, c *netlist.Circuit, g netlist.Gate) string {
	out, pin := "Q", g.Out
	if pin < 0 {
		out, pin = "nQ", g.OutN
	}
	net := "unconnected"
	if pin >= 0 {
		net = c.Nets[c.Drivers[pin].Net].Name
	}
	return fmt.Sprintf("%s half %d (%s: %s)", comp.Ref, unit+1, out, net)
}

func lineIndex(l lpt.Line) int {
	for i := range lpt.Lines {
		if lpt.Lines[i].Pin == l.Pin {
			return i
		}
	}
	panic("timed: a port line not in lpt.Lines")
}

// FlipFlops names the board's 74LS74 halves in the order of
// Config.PowerUp.
func (b *Board) FlipFlops() []string { return slices.Clone(b.ffName) }

// PowerUpStates returns the Q level each flip-flop powered up with, in the
// order FlipFlops names them.
func (b *Board) PowerUpStates() []bool { return slices.Clone(b.powered) }

// powerUp brings the board to its power-on levels: every PC's registers 0,
// the flip-flops at the given Q levels, and everything settled from there
// at once (a real board has settled long before any program starts).
func (b *Board) powerUp(q []bool) {
	b.powered = q
	for i := range b.gates {
		for _, d := range []int32{b.gates[i].out, b.gates[i].outN} {
			if d >= 0 {
				b.drv[d] = tstate{cur: on | high, proj: on | high}
			}
		}
	}
	pins := lpt.OutputPins(0, 0)
	for k := range b.ports {
		p := &b.ports[k]
		p.pins = pins
		for _, l := range p.outs {
			st := drive(p.plugged, pins.High(lpt.Lines[l.line].Pin))
			b.drv[l.driver] = tstate{cur: st, proj: st}
		}
	}
	for n := range b.nets {
		b.level[n] = b.resolve(int32(n))
	}
	for i, g := range b.ffs {
		b.dff[g] = hw.DFFState{Q: q[i], Clk: b.levelOf(b.gates[g].in[1])}
	}
	b.zero = true
	for g := range b.gates {
		b.evaluate(int32(g), -1)
	}
	b.runQuiet()
	b.zero = false
	for i := range b.pcIn {
		st := drive(true, true) // unplugged and unconnected inputs float high
		if n := b.inNet[i]; n >= 0 && b.ports[i/len(lpt.Lines)].plugged {
			st = drive(true, b.level[n])
		}
		b.pcIn[i] = tstate{cur: st, proj: st}
	}
}
