package timed

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Cable models the printer cables between the PCs' ports and the board.
// A line changes at the far end of its cable after the cable's propagation
// delay, its own skew, and the time its edge takes to reach the receiver's
// threshold, about half the swing: half the edge time. A driver's edge is
// slow in proportion to the cable it must charge, so the board's NAND
// outputs, each driving a line in every PE's cable, are the slowest of all
// (the seed: about 300 ns on a 4-PE board with 10-foot cables).
type Cable struct {
	// Metres is each PE's cable length: none for ideal wires (no delay,
	// no slow edges), one for every PE, or one per PE.
	Metres []float64
	// Skew delays each line of each cable by a random amount from 0 to
	// Skew: wires of different lengths, ports that update bits apart.
	Skew time.Duration
	// Wire holds the per-metre figures; the zero value means DefaultWire.
	Wire Wire
}

// Wire is how a metre of printer cable delays a signal.
type Wire struct {
	// Propagation per metre: signals travel at about 0.66 c in PVC cable,
	// 5 ns/m: a 10-foot cable is about 15 ns each way (docs/timing.md, "The model").
	Propagation time.Duration
	// Edge is the rise or fall time (10-90 %) per metre of cable that one
	// 24 mA driver must charge: the seed saw a 74LS40 driving four 10-foot
	// cables switch in about 300 ns, 300 ns / (4 × 3.05 m) ≈ 25 ns/m. The
	// board's 74LS40, 74LS125/126 and 74LS244 and the PC's data-line
	// drivers (a 74LS374 on the IBM adapter) are all 24 mA drivers.
	Edge time.Duration
	// PullUpRise is the delay per metre until a rising control line
	// (nStrobe, nAutoFd, nInit, nSelectIn) crosses the 1.4 V threshold:
	// the PC's control outputs are open-collector with 4.7 kΩ pull-ups on
	// the IBM adapter (the seed: "not as well driven as the data lines"),
	// so they rise as RC = 4.7 kΩ × 50 pF/m and cross after 0.33 RC ≈
	// 77 ns/m. They fall as fast as data lines.
	PullUpRise time.Duration
}

// DefaultWire is a typical unshielded printer cable.
var DefaultWire = Wire{Propagation: 5 * time.Nanosecond, Edge: 25 * time.Nanosecond, PullUpRise: 77 * time.Nanosecond}

// TenFeet is the length of the seed's cables (it allows "up to about 10
// feet"), in metres.
const TenFeet = 3.048

// MaxCableMetres bounds cable lengths: far beyond any parallel cable, but
// it keeps delays finite.
const MaxCableMetres = 1000

func (c Cable) check(pes int) error {
	if n := len(c.Metres); n > 1 && n < pes {
		return fmt.Errorf("timed: %d cable lengths for %d PEs: give one for all, or one per PE", n, pes)
	}
	for k, m := range c.Metres {
		if !(m >= 0 && m <= MaxCableMetres) {
			return fmt.Errorf("timed: PE %d's cable is %v m long: use 0 to %d m", k, m, MaxCableMetres)
		}
	}
	if c.Skew < 0 || c.Wire.Propagation < 0 || c.Wire.Edge < 0 || c.Wire.PullUpRise < 0 {
		return fmt.Errorf("timed: negative cable delay (skew %v, wire %+v)", c.Skew, c.Wire)
	}
	return nil
}

// metres is PE k's cable length.
func (c Cable) metres(k int) float64 {
	switch len(c.Metres) {
	case 0:
		return 0
	case 1:
		return c.Metres[0]
	}
	return c.Metres[k]
}

func perMetre(d time.Duration, m float64) time.Duration { return time.Duration(float64(d) * m) }

// wire gives every cable line its delays: each PC-driven line its delay
// into the board for each edge, each status input its delay from the
// board's net, slowed by every plugged cable that net drives.
func (b *Board) wire(c Cable, rng *rand.Rand) {
	w := c.Wire
	if w == (Wire{}) {
		w = DefaultWire
	}
	skew := func() time.Duration {
		if c.Skew == 0 {
			return 0
		}
		return time.Duration(rng.Int64N(int64(c.Skew) + 1))
	}
	for k := range b.ports {
		p := &b.ports[k]
		if !p.plugged {
			continue
		}
		m := c.metres(k)
		for i := range p.outs {
			l := &p.outs[i]
			base := perMetre(w.Propagation, m) + skew()
			l.fall = base + perMetre(w.Edge, m)/2
			l.rise = l.fall
			if lpt.Lines[l.line].Reg == lpt.Control {
				l.rise = base + perMetre(w.PullUpRise, m)
			}
		}
	}
	for n := range b.nets {
		var load float64
		for _, i := range b.nets[n].pcIns {
			load += c.metres(int(i) / len(lpt.Lines))
		}
		for _, i := range b.nets[n].pcIns {
			b.inWait[i] = perMetre(w.Propagation, c.metres(int(i)/len(lpt.Lines))) + skew() + perMetre(w.Edge, load)/2
		}
	}
}
