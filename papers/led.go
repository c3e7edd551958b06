package papers

import (
	"github.com/ttlpapers/ttlpapers/lpt"
)

// LED is a colour of a PE's front-panel LED: the one type the driver and
// the emulator share (lpt.LED).
type LED = lpt.LED

// The colours, as lpt has them.
const (
	Dark   = lpt.Dark   // not in use
	Green  = lpt.Green  // running
	Red    = lpt.Red    // waiting at a barrier
	Orange = lpt.Orange // the seed's "special" status
)

// ledBits are the LED lines of the data register; LED values shift onto
// them.
const (
	ledBits  = lpt.LG | lpt.LR
	ledShift = 4
)

// SetLED shows c on this PE's LED from now on: one port write, none when it
// shows c already. Open shows green. The driver keeps the seed's automatic
// red: while a barrier wait is slow (two polls failed) the LED is red, and
// when the wait ends it shows c again. Leave and Close darken it. On an
// engine (MPI) nothing lights — a cluster node has no PAPERS LED — and the
// colour is only kept, for LED.
func (p *PE) SetLED(c LED) error {
	if c > Orange {
		return p.errorf("SetLED: %w: colour %d: use Dark, Green, Red or Orange", ErrArgument, c)
	}
	if err := p.usable("SetLED"); err != nil {
		return err
	}
	if v := p.last&^ledBits | uint8(c)<<ledShift; v != p.last {
		p.last = v
		if p.eng == nil {
			p.port.WriteData(v)
		}
	}
	return nil
}

// LED returns the colour the program chose (SetLED; green after Open).
func (p *PE) LED() LED { return LED(p.last & ledBits >> ledShift) }

// waitingLED is the data byte to show while a wait is slow: the current
// byte with the LED red.
func (p *PE) waitingLED() uint8 { return p.last&^ledBits | lpt.LR }
