package emu

import "fmt"

// PowerUp says how the board's 74LS74 halves power up. A real 74LS74 comes
// up in either state: with a Seed each power-up draws the halves' Q at
// random — reproducibly: the same seed gives the same sequence of
// power-ups (creation, then each PowerCycle) — or every power-up takes a
// chosen State. Pass it to New, NewFromNetlist or CreateShared. Without
// one (the zero PowerUp) both halves power up with Q low, as the emulator
// always has, so that runs and tests that do not ask for power-up states
// stay exactly reproducible.
type PowerUp struct {
	// Seed draws the states (0: no drawing).
	Seed uint64
	// State, when set, is the state of every power-up instead.
	State *FlipFlops
}

func (p PowerUp) apply(o *options) { o.power = p }

// FlipFlops is a state of the board's two 74LS74 halves: the Q outputs
// they hold before the logic around them acts (at power-up the interrupt
// half is cleared at once, since every port's control register reads 0,
// which acknowledges).
type FlipFlops struct {
	Ready     bool // the barrier half's Q, net RDYQ
	Interrupt bool // the interrupt half's Q: the interrupt flag is set (net nINTQ low)
}

func (f FlipFlops) String() string {
	return fmt.Sprintf("RDYQ=%d interrupt=%d", bit(f.Ready), bit(f.Interrupt))
}

// AllFlipFlops lists every state of the two halves, for tests that start
// the board in each.
var AllFlipFlops = []FlipFlops{{false, false}, {false, true}, {true, false}, {true, true}}

// bits is the flip-flops' Q bits in the order of the board's flip-flops
// (bit 0 the first half, bit 1 the second: as compile finds them).
func (f FlipFlops) bits() uint8 {
	return uint8(bit(f.Ready) | bit(f.Interrupt)<<1)
}

// stateOfQ maps FlipFlops.bits to the board's flip-flop order.
func (b *Board) stateOfQ(q uint8) uint8 {
	var st uint8
	for i := range b.dffs {
		var v bool
		switch i {
		case b.ready:
			v = q&1 != 0
		case b.intr:
			v = q&2 != 0
		default:
			v = q>>i&1 != 0
		}
		st |= uint8(bit(v)) << (2 * i)
	}
	return st
}

// powerUpState is the flip-flop state of power-up number cycle (0 at
// creation, one more for each PowerCycle).
func (b *Board) powerUpState(cycle uint64) uint8 {
	if f := b.m.load(hFixed); f&fixedSet != 0 {
		return b.stateOfQ(uint8(f))
	}
	return b.stateOfQ(uint8(splitmix(b.m.load(hSeed) + cycle*0x9e3779b97f4a7c15)))
}

// splitmix is SplitMix64's output function: a well-mixed 64-bit hash.
func splitmix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// PowerUp returns how the board powers up and the state of its latest
// power-up.
func (b *Board) PowerUp() (PowerUp, FlipFlops) {
	defer b.survive(b.guard())
	p := PowerUp{Seed: b.m.load(hSeed)}
	if f := b.m.load(hFixed); f&fixedSet != 0 {
		p.State = &FlipFlops{Ready: f&1 != 0, Interrupt: f&2 != 0}
	}
	st := b.powerUpState(powerCycle(b.m.load(hPower)))
	f := FlipFlops{}
	if b.ready >= 0 {
		f.Ready = st>>(2*b.ready)&1 != 0
	}
	if b.intr >= 0 {
		f.Interrupt = st>>(2*b.intr)&1 != 0
	}
	return p, f
}

// Reset brings the board back to power-on: every port's registers read 0
// and the flip-flops take the state of the latest power-up again, as when
// the board's power is cut and restored with the same luck. Faults stay,
// as do claims and an abort. PEs running meanwhile see what PCs would see
// of a board reset under them.
func (b *Board) Reset() { b.power(false) }

// PowerCycle is Reset with the next power-up state of the seed's sequence
// (or the chosen state again).
func (b *Board) PowerCycle() { b.power(true) }

func (b *Board) power(next bool) {
	defer b.survive(b.guard())
	b.mutate(func() {
		for k := range b.ports {
			i := b.lay.port(k)
			for old := b.m.load(i); !b.m.cas(i, old, portWord(old>>seqShift+1, 0, 0)); old = b.m.load(i) {
			}
		}
		for old := b.m.load(hPower); ; old = b.m.load(hPower) {
			nw := old + seqOne
			if next {
				nw = nw&^0xffff | (old+1)&0xffff
			}
			if b.m.cas(hPower, old, nw) {
				return
			}
		}
	})
}
