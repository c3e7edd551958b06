package periphlpt

import (
	"errors"
	"fmt"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
)

// Pins is one GPIO pin per port line, indexed like lpt.Lines. Only the
// reserved nSelectIn line may be nil (not connected).
type Pins [len(lpt.Lines)]gpio.PinIO

// Resolve looks m's pins up in gpioreg (host.Init must have run).
func Resolve(m gpiomap.Mapping) (Pins, error) {
	var pins Pins
	for i, name := range m {
		if name == "" {
			continue
		}
		if pins[i] = gpioreg.ByName(name); pins[i] == nil {
			return pins, fmt.Errorf("periphlpt: no GPIO pin named %q (for %s): check the name against the host's pins (gpioreg.All, e.g. GPIO17 on a Raspberry Pi) and that host.Init() ran", name, lpt.Lines[i].Name)
		}
	}
	return pins, nil
}

// Config describes a GPIO-backed port.
type Config struct {
	Pins Pins
	// Out and In are optional bulk groups, Out holding the mapped output
	// pins and In the input pins (in any order, matched by name). With them
	// a register write is one Out call and a status read one Read call.
	// When nil, Open builds them for Linux gpiochip lines; otherwise the
	// port uses one call per changed pin.
	Out, In gpio.Group
}

// Open parses mapping, resolves its pins in gpioreg and opens a port on
// them, with bulk groups when every output (and every input) line is on one
// Linux gpiochip.
func Open(mapping string) (lpt.Port, error) {
	m, err := gpiomap.ParseMapping(mapping)
	if err != nil {
		return nil, err
	}
	pins, err := Resolve(m)
	if err != nil {
		return nil, err
	}
	c := Config{Pins: pins}
	c.Out, c.In = chipGroups(pins)
	return NewPort(c)
}

// NewPort opens a port on GPIO pins: the inputs are configured as inputs
// (pulled up, as an unconnected TTL input floats high) and the outputs are
// driven to data 0x0f and control 0: both strobes low, so that barriers
// wait for this PE until its program opens the board, as a parked or
// powered-on port makes them, and every data line high. The other PEs may
// be running meanwhile, and a NAND they have just completed reads this
// port's data lines, which read high while the pins were inputs: pulling
// one low would show in their result (docs/protocol.md, "Check-in").
// GPIO pins, unlike a port's registers, hold no previous value to keep.
func NewPort(c Config) (lpt.Port, error) {
	p := &gpioPort{pins: c.Pins, out: c.Out, in: c.In}
	for i, l := range lpt.Lines {
		pn := c.Pins[i]
		if pn == nil {
			if !gpiomap.Optional(l) {
				return nil, fmt.Errorf("periphlpt: no pin for %s", l)
			}
			continue
		}
		if !l.Output() {
			if err := pn.In(gpio.PullUp, gpio.NoEdge); err != nil {
				return nil, fmt.Errorf("periphlpt: %s as input for %s: %w", pn, l, err)
			}
		}
	}
	var err error
	if c.Out != nil {
		if p.outBit, err = groupBits(c.Out, c.Pins, true); err != nil {
			return nil, err
		}
	}
	if c.In != nil {
		if p.inBit, err = groupBits(c.In, c.Pins, false); err != nil {
			return nil, err
		}
		for _, b := range p.inBit {
			p.inMask |= b
		}
	}
	p.data, p.control = lpt.DataMask, 0
	p.drive(lpt.OutputPins(p.data, p.control), true)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// groupBits finds each line's bit in a group, by pin name.
func groupBits(g gpio.Group, pins Pins, outputs bool) (bits [len(lpt.Lines)]gpio.GPIOValue, err error) {
	for i, l := range lpt.Lines {
		if l.Output() != outputs || pins[i] == nil {
			continue
		}
		idx := -1
		for j, gp := range g.Pins() {
			if gp.Name() == pins[i].Name() {
				idx = j
			}
		}
		if idx < 0 {
			return bits, fmt.Errorf("periphlpt: group %s lacks pin %s (for %s)", g, pins[i].Name(), l)
		}
		bits[i] = 1 << idx
	}
	return bits, nil
}

type gpioPort struct {
	pins          Pins
	out, in       gpio.Group
	outBit, inBit [len(lpt.Lines)]gpio.GPIOValue
	inMask        gpio.GPIOValue
	data, control uint8
	level         lpt.Pins // the output pin levels now driven
	err           lpt.StickyError
}

// drive sets the output pins whose level changes (all when force): with
// the bulk group in one call, else pin by pin in an order that never shows
// the board a state the driver did not mean — data and control lines first,
// then the strobe going low, then the strobe going high. A flip through
// S0=S1=1 would let the other PEs see this PE at both phases at once and
// pass a barrier it has not reached; S0=S1=0 holds every barrier instead.
func (p *gpioPort) drive(levels lpt.Pins, force bool) {
	changed := levels ^ p.level
	if force {
		changed = ^lpt.Pins(0)
	}
	p.level = levels
	if p.out == nil {
		for pass := 0; pass < 3; pass++ {
			for i, l := range lpt.Lines {
				if !l.Output() || p.pins[i] == nil || !changed.High(l.Pin) {
					continue
				}
				high := levels.High(l.Pin)
				if strobeOrder(l, high) == pass {
					p.err.Set(p.pins[i].Out(gpio.Level(high)))
				}
			}
		}
		return
	}
	var value, mask gpio.GPIOValue
	for i, l := range lpt.Lines {
		if l.Output() && p.pins[i] != nil && changed.High(l.Pin) {
			mask |= p.outBit[i]
			if levels.High(l.Pin) {
				value |= p.outBit[i]
			}
		}
	}
	if mask != 0 {
		p.err.Set(p.out.Out(value, mask))
	}
}

// strobeOrder is the pass in which a pin-by-pin write sets line l to level
// high: 0 for every line but the strobes, 1 for a strobe going low, 2 for a
// strobe going high.
func strobeOrder(l lpt.Line, high bool) int {
	switch {
	case l.Reg != lpt.Data || l.Mask&lpt.Strobes == 0:
		return 0
	case !high:
		return 1
	}
	return 2
}

func (p *gpioPort) WriteData(v uint8) {
	p.data = v
	p.drive(lpt.OutputPins(v, p.control), false)
}

func (p *gpioPort) WriteControl(v uint8) {
	p.control = v
	p.drive(lpt.OutputPins(p.data, v), false)
}

// ReadData and ReadControl return the latches, as an SPP port does.
func (p *gpioPort) ReadData() uint8    { return p.data }
func (p *gpioPort) ReadControl() uint8 { return p.control }

// ReadStatus samples the five input pins.
func (p *gpioPort) ReadStatus() uint8 {
	levels := lpt.Pins(0)
	if p.in != nil {
		v, err := p.in.Read(p.inMask)
		p.err.Set(err)
		for i, b := range p.inBit {
			if b != 0 && v&b != 0 {
				levels |= 1 << lpt.Lines[i].Pin
			}
		}
	} else {
		for i, l := range lpt.Lines {
			if !l.Output() && bool(p.pins[i].Read()) {
				levels |= 1 << l.Pin
			}
		}
	}
	return lpt.StatusFromPins(levels)
}

func (p *gpioPort) Err() error { return p.err.Err() }

// Close releases the bulk groups; the pins keep their levels, as a port's
// registers do.
func (p *gpioPort) Close() error {
	var errs []error
	for _, g := range []gpio.Group{p.out, p.in} {
		if c, ok := g.(interface{ Close() error }); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
