package emu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// The differential test: the lock-free board — every port evaluating in a
// simulation of its own, incrementally, from snapshots it may see late —
// and the locked one — every write settled at once in the board's one
// simulation — against a reference written the plain way: the whole board re-evaluated
// from scratch after every step, gate by gate until nothing changes, then
// the flip-flops from the settled logic, with the same hw.Func.Eval.

// ref is the reference board: pins, faults and flip-flop states, and the
// levels computed from them.
type ref struct {
	b          *Board
	data, ctl  []uint8
	fault      []uint64 // fault words (sequence numbers ignored)
	dff        []hw.DFFState
	on, val    []bool // drivers
	level      []bool // nets
	contention uint64
}

func newRef(b *Board, state FlipFlops) *ref {
	r := &ref{b: b, data: make([]uint8, len(b.ports)), ctl: make([]uint8, len(b.ports)), fault: make([]uint64, len(b.ports)),
		dff: make([]hw.DFFState, len(b.dffs)), on: make([]bool, len(b.drivers)), val: make([]bool, len(b.drivers)), level: make([]bool, len(b.nets))}
	for k := b.pes; k < len(b.ports); k++ {
		r.fault[k] = faultUnplugged
	}
	r.powerUp(state)
	return r
}

// powerUp: registers 0, the flip-flops' Q as given, each clock's last
// level its settled level.
func (r *ref) powerUp(state FlipFlops) {
	clear(r.data)
	clear(r.ctl)
	st := r.b.stateOfQ(state.bits())
	for i := range r.dff {
		r.dff[i] = hw.DFFState{Q: st>>(2*i)&1 != 0}
	}
	r.settle(true)
}

func (r *ref) in(n int32) bool { return n < 0 || r.level[n] }

// settle recomputes every level; a settle of a change that reaches the
// logic (count) counts the nets it leaves contended. (A write that changes
// only inert pins — the LEDs — is no settle.)
func (r *ref) settle(powerUp bool) { r.settleCounting(powerUp, true) }

func (r *ref) settleCounting(powerUp, count bool) {
	b := r.b
	r.on[b.vcc], r.val[b.vcc] = true, true
	r.on[b.gnd], r.val[b.gnd] = true, false
	for k, p := range b.ports {
		pins := lpt.OutputPins(r.data[k], r.ctl[k])
		plugged, s0, s1 := faultInfo(r.fault[k])
		for _, cl := range p.outputs {
			r.on[cl.Driver] = plugged
			r.val[cl.Driver] = (pins.High(cl.Line.Pin) || s1&(1<<cl.Line.Pin) != 0) && s0&(1<<cl.Line.Pin) == 0
		}
	}
	for i, g := range b.dffs { // flip-flop outputs as they were
		r.drive(b.gates[g].Out, true, r.dff[i].Q)
		r.drive(b.gates[g].OutN, true, !r.dff[i].Q)
	}
	for {
		r.combinational()
		changed := false
		for i, g := range b.dffs {
			st := r.dff[i]
			in := r.inputs(g)
			if powerUp {
				st.Clk = in&2 != 0
			}
			_, out, outN, next := hw.FuncDFF.Eval(in, 4, true, st)
			gt := &b.gates[g]
			c1, c2 := r.drive(gt.Out, true, out), r.drive(gt.OutN, true, outN)
			changed = changed || next != r.dff[i] || c1 || c2
			r.dff[i] = next
		}
		if !changed {
			break
		}
	}
	for i := range b.nets {
		if count && b.nets[i].Multi && r.disagree(int32(i)) {
			r.contention++
		}
	}
}

// drive sets a driver (none: -1) and reports whether it changed.
func (r *ref) drive(d int32, on, val bool) bool {
	if d < 0 || r.on[d] == on && r.val[d] == val {
		return false
	}
	r.on[d], r.val[d] = on, val
	return true
}

func (r *ref) inputs(g int32) uint32 {
	var in uint32
	for k, n := range r.b.gates[g].In {
		if r.in(n) {
			in |= 1 << k
		}
	}
	return in
}

// combinational evaluates every gate but the flip-flops until no net
// changes.
func (r *ref) combinational() {
	b := r.b
	for pass := 0; ; pass++ {
		if pass > len(b.gates)+2 {
			panic("reference: the logic does not settle")
		}
		for gi := range b.gates {
			g := &b.gates[gi]
			if g.Fn == hw.FuncDFF || g.Out < 0 {
				continue
			}
			on, out, _, _ := g.Fn.Eval(r.inputs(int32(gi)), len(g.In), g.En < 0 || r.in(g.En) != g.EnLow, hw.DFFState{})
			r.drive(g.Out, on, out)
		}
		changed := false
		for n := range b.nets {
			v := r.resolve(int32(n))
			changed = changed || v != r.level[n]
			r.level[n] = v
		}
		if !changed {
			return
		}
	}
}

func (r *ref) resolve(n int32) bool {
	v := true
	any := false
	for _, d := range r.b.nets[n].Drivers {
		if r.on[d] {
			if any && r.val[d] != v {
				return false
			}
			any, v = true, r.val[d]
		}
	}
	return v
}

func (r *ref) disagree(n int32) bool {
	any, v := false, false
	for _, d := range r.b.nets[n].Drivers {
		if r.on[d] {
			if any && r.val[d] != v {
				return true
			}
			any, v = true, r.val[d]
		}
	}
	return false
}

func (r *ref) status(k int) uint8 {
	plugged, s0, s1 := faultInfo(r.fault[k])
	st := statusNotPins
	for _, cl := range r.b.ports[k].inputs {
		l := !plugged || r.in(cl.Net)
		l = (l || s1&(1<<cl.Line.Pin) != 0) && s0&(1<<cl.Line.Pin) == 0
		if l != cl.Line.Inverted {
			st |= cl.Line.Mask
		}
	}
	return st
}

// stimulus drives a board and its reference with the same random steps and
// compares them. Ports evaluate only when a step touches them (a write, or
// a read the step picks), so their simulations lag by random amounts.
type stimulus struct {
	t     testing.TB
	b     *Board
	r     *ref
	ports []*Port
	next  func(n int) int // random source
}

func newStimulus(t testing.TB, pes int, up PowerUp, locked, miswire bool, next func(int) int) *stimulus {
	size, err := hw.SizeFor(pes)
	if err != nil {
		t.Fatal(err)
	}
	b := newInProcess(hw.MustNew(size), pes, locked, []Option{up})
	if miswire {
		// A wiring error: one PE's two Busy buffers enabled by the same
		// level, so they fight whenever RDYQ and nINTQ agree... or not.
		k := next(pes)
		for gi := range b.gates {
			g := &b.gates[gi]
			if g.Fn == hw.FuncBuffer && g.Out >= 0 && b.nets[b.drivers[g.Out].Net].Name == hw.CableNet(k, "Busy") && g.EnLow {
				g.EnLow = false
				break
			}
		}
		// The board starts again on the changed circuit.
		b.start(b.Job(), []Option{up})
	}
	_, state := b.PowerUp()
	s := &stimulus{t: t, b: b, r: newRef(b, state), next: next}
	s.r.contention = 0
	for k := 0; k < len(b.ports); k++ {
		p, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		s.ports = append(s.ports, p)
	}
	return s
}

// step makes one random change and checks the board against the
// reference.
func (s *stimulus) step(i int) {
	b, r, n := s.b, s.r, len(s.ports)
	t0 := s.inputsT()
	what := s.next(100)
	switch {
	case what < 80:
		s.writes()
	case what < 95:
		f := Fault{PE: s.next(n), Line: lpt.Lines[s.next(len(lpt.Lines))], Kind: FaultKind(s.next(3))}
		switch s.next(4) {
		case 0:
			b.Repair(f.PE)
		case 1:
			b.Plug(f.PE)
		default:
			b.Inject(f)
		}
		r.fault[f.PE] = b.m.load(b.lay.fault(f.PE)) &^ (faultMaxSeq << faultSeqShift)
	default:
		if what < 98 {
			b.Reset()
		} else {
			b.PowerCycle()
		}
		_, st := b.PowerUp()
		r.powerUp(st)
		s.checkAll(i, " (power-up)")
		return
	}
	if what >= 80 || !s.b.locked { // (locked writes settled the reference)
		r.settleCounting(false, s.inputsT() != t0)
	}
	// Some ports look now, the others later (their simulations lag).
	for range 1 + s.next(3) {
		k := s.next(n)
		if got, want := s.ports[k].ReadStatus(), r.status(k); got != want {
			s.t.Fatalf("step %d: PE %d status %#02x, reference %#02x", i, k, got, want)
		}
	}
	if s.next(8) == 0 {
		s.checkAll(i, "")
	}
}

// writes makes 1 to 3 PEs write at once: all the stores, then the
// evaluations (a single write goes through the port, as a PE makes it).
// On a locked board every write goes through the port and settles before
// the next, and so does the reference.
func (s *stimulus) writes() {
	r, n := s.r, len(s.ports)
	writers := 1 + s.next(3)
	var ks []int
	for range writers {
		t0 := s.inputsT()
		k := s.next(n)
		v := uint8(s.next(256))
		if s.next(2) == 0 {
			v &= lpt.Strobes | 1 // few values: states repeat, and the memos answer
		}
		ctl := s.next(4) == 0
		if ctl {
			v &= 0x0f
			r.ctl[k] = v
		} else {
			r.data[k] = v
		}
		switch {
		case writers > 1 && !s.b.locked:
			s.store(k, v, ctl)
			ks = append(ks, k)
		case ctl:
			s.ports[k].WriteControl(v)
		default:
			s.ports[k].WriteData(v)
		}
		if s.b.locked {
			r.settleCounting(false, s.inputsT() != t0)
		}
	}
	for _, k := range ks {
		s.b.evaluate(s.ports[k].sim)
	}
}

// inputsT is T of the board's inputs now.
func (s *stimulus) inputsT() uint64 {
	snap := make([]uint64, 2*len(s.ports)+1)
	return s.b.collect(s.b.bs, snap, -1).t
}

// store writes a register without evaluating, as a PE stopped right after
// its store would leave it.
func (s *stimulus) store(k int, v uint8, ctl bool) {
	m, i := s.b.m, s.b.lay.port(k)
	old := m.load(i)
	d, c := wordData(old), wordControl(old)
	if ctl {
		c = v
	} else {
		d = v
	}
	m.store(i, portWord(old>>seqShift+1, d, c))
}

// checkAll compares every status, every net, the flip-flops and the
// contention count.
func (s *stimulus) checkAll(i int, what string) {
	b, r := s.b, s.r
	for k, p := range s.ports {
		if got, want := p.ReadStatus(), r.status(k); got != want {
			s.t.Fatalf("step %d%s: PE %d status %#02x, reference %#02x", i, what, k, got, want)
		}
	}
	levels := b.Levels(nil)
	for n, l := range levels {
		if l != r.level[n] {
			s.t.Fatalf("step %d%s: net %s is %v, reference %v", i, what, b.nets[n].Name, l, r.level[n])
		}
	}
	st := dffState(b.m.load(hDFF))
	for f := range b.dffs {
		if q := st>>(2*f)&1 != 0; q != r.dff[f].Q {
			s.t.Fatalf("step %d%s: flip-flop %d Q=%v, reference %v", i, what, f, q, r.dff[f].Q)
		}
	}
	if got := b.Contention(); got != r.contention {
		s.t.Fatalf("step %d%s: contention %d, reference %d", i, what, got, r.contention)
	}
}

func powerUps(rng *rand.Rand) []PowerUp {
	var ups []PowerUp
	for _, st := range AllFlipFlops {
		ups = append(ups, PowerUp{State: &st})
	}
	return append(ups, PowerUp{Seed: rng.Uint64() | 1}, PowerUp{})
}

// TestDifferential: every PE count from 4 to 32 (with testenv.EnvLong; by
// default the board sizes and one count past each, as the trees grow), every
// power-up state (and random ones, with power cycles and resets on the
// way), faults on random lines, and a miswired board, locked and
// lock-free: the board and the reference agree on every status, net,
// flip-flop and contention count at every step.
func TestDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 4))
	steps := 400
	if testing.Short() || raceEnabled {
		steps = 60
	}
	counts := []int{4, 5, 8, 9, 16, 17, 32}
	if testenv.LongTests() {
		counts = counts[:0]
		for pes := 4; pes <= lpt.MaxPEs; pes++ {
			counts = append(counts, pes)
		}
	}
	for _, pes := range counts {
		for ui, up := range powerUps(rng) {
			for _, c := range []struct{ locked, miswire bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
				locked, miswire := c.locked, c.miswire
				t.Run(fmt.Sprintf("pes=%d/powerup=%d/locked=%v/miswired=%v", pes, ui, locked, miswire), func(t *testing.T) {
					s := newStimulus(t, pes, up, locked, miswire, rng.IntN)
					s.checkAll(-1, " (power-on)")
					for i := range steps {
						s.step(i)
					}
					s.checkAll(steps, " (end)")
					if !miswire && s.b.Contention() != 0 {
						t.Errorf("a correct board counted %d contentions", s.b.Contention())
					}
				})
			}
		}
	}
}

// maxFuzzSteps bounds FuzzDifferential's input, in bytes (about one step each).
const maxFuzzSteps = 2048

// FuzzDifferential drives the same comparison from fuzzed bytes: the first
// byte picks the PE count and power-up, the second also whether the board
// is miswired (bit 7) and locked (bit 6), the rest are the random choices.
func FuzzDifferential(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{28, 0xff, 0x80, 0x40, 0x20, 0x10, 99, 97, 96, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		// Each step re-evaluates the whole reference netlist: a cap on the
		// steps keeps every run short (a mutated input can grow to
		// megabytes) without losing a sequence a shorter input can make.
		data = data[:min(len(data), maxFuzzSteps)]
		pes := 4 + int(data[0])%(lpt.MaxPEs-3)
		ups := powerUps(rand.New(rand.NewPCG(uint64(data[1]), 1)))
		up := ups[int(data[1])%len(ups)]
		i := 2
		next := func(n int) int {
			if i >= len(data) {
				return 0
			}
			v := int(data[i]) % n
			i++
			return v
		}
		s := newStimulus(t, pes, up, data[1]&0x40 != 0, data[1]&0x80 != 0, next)
		for step := 0; i < len(data); step++ {
			s.step(step)
		}
		s.checkAll(-1, " (end)")
	})
}

// TestDifferentialMemo: barriers and NANDs repeated, in a few arrival
// orders, as programs repeat them, so that the memos — a locked board's,
// a lock-free board's ports' — answer most writes; at every write the
// board agrees with the reference on every status, and at every round's
// end on everything else.
func TestDifferentialMemo(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	for _, c := range []struct {
		pes    int
		locked bool
	}{{4, true}, {8, true}, {32, true}, {4, false}, {8, false}, {32, false}} {
		t.Run(fmt.Sprintf("pes=%d/locked=%v", c.pes, c.locked), func(t *testing.T) {
			pes := c.pes
			s := newStimulus(t, pes, PowerUp{}, c.locked, false, rng.IntN)
			orders := [][]int{rng.Perm(pes), rng.Perm(pes), rng.Perm(pes)}
			phase := uint8(lpt.S1)
			for round := range 60 {
				phase ^= lpt.Strobes
				for _, k := range orders[rng.IntN(len(orders))] {
					v := phase | uint8(k+round%2)&lpt.DataMask
					s.r.data[k] = v
					s.ports[k].WriteData(v)
					s.r.settle(false)
					for j, p := range s.ports {
						if got, want := p.ReadStatus(), s.r.status(j); got != want {
							t.Fatalf("round %d, after PE %d's write: PE %d status %#02x, reference %#02x", round, k, j, got, want)
						}
					}
				}
				s.checkAll(round, "")
			}
			hits := uint64(0)
			if c.locked {
				hits = s.b.memo.hits
			} else {
				for _, p := range s.ports {
					hits += p.sim.memo.hits
				}
			}
			if hits == 0 {
				t.Error("no memo answered a write")
			}
			t.Logf("%d evaluations of %d writes answered by a memo", hits, 60*pes)
		})
	}
}
