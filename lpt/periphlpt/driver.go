// Package periphlpt joins TTL_PAPERS printer ports and periph.io GPIO, both
// ways.
//
// A periph driver (registered with driverreg, so host.Init() loads it)
// exposes each accessible parallel port's 17 lines as gpio.PinIO pins in
// gpioreg, named "LPT1_D0" … "LPT1_D7", "LPT1_NSTROBE", "LPT1_BUSY", … with
// aliases by DB-25 pin ("LPT1_PIN11" is LPT1_BUSY). Levels are pin levels:
// the SPP register inversions are applied, so LPT1_NSTROBE.Out(gpio.Low)
// pulls pin 1 low.
//
// The other way, NewPort and Open build an lpt.Port from any 17 periph GPIO
// pins — a Raspberry Pi's header, any Linux gpiochip — so a board can be
// driven without a printer port. The port drives each pin exactly as a real
// port would drive the DB-25 pin (docs/hardware.md has the wiring and the
// 3.3 V / 5 V level shifting).
package periphlpt

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/pin"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// DriverName is the name the periph driver registers under.
const DriverName = "lpt"

func init() { driverreg.MustRegister(&drv) }

var drv driverLPT

// driverLPT implements periph's driver.Impl.
type driverLPT struct{}

func (*driverLPT) String() string          { return DriverName }
func (*driverLPT) Prerequisites() []string { return nil }
func (*driverLPT) After() []string         { return nil }

// Init opens LPT1 to LPT3 — through ppdev (/dev/parport0..2) when it
// works, else by direct I/O at 0x378, 0x278, 0x3bc — and registers the
// pins of each port that answers. With none, the driver is skipped (false)
// with every method's reason.
func (*driverLPT) Init() (bool, error) {
	var reasons []string
	loaded := false
	for n := 1; n <= 3; n++ {
		port, err := openLPT(n)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("LPT%d: %v", n, err))
			continue
		}
		if _, err := RegisterPort(fmt.Sprintf("LPT%d", n), port); err != nil {
			port.Close()
			return true, err
		}
		loaded = true
	}
	if !loaded {
		return false, fmt.Errorf("no parallel port accessible (run papersctl probe): %s", strings.Join(reasons, "; "))
	}
	return true, nil
}

// RegisterPort registers the 17 lines of port in gpioreg as
// "<prefix>_<LINE>" (upper case: LPT1_D0, LPT1_NSTROBE, LPT1_BUSY, …) with
// aliases "<prefix>_PIN<n>" by DB-25 pin, and returns them in lpt.Lines
// order. The pins share the port, so they may be used from any goroutine.
func RegisterPort(prefix string, port lpt.Port) ([]gpio.PinIO, error) {
	sp := &sharedPort{port: port, data: port.ReadData(), control: port.ReadControl() & lpt.ControlPins}
	pins := make([]gpio.PinIO, 0, len(lpt.Lines))
	for _, l := range lpt.Lines {
		p := &portPin{name: prefix + "_" + strings.ToUpper(l.Name), line: l, port: sp}
		if err := gpioreg.Register(p); err != nil {
			return nil, fmt.Errorf("periphlpt: registering %s: %w", p.name, err)
		}
		if err := gpioreg.RegisterAlias(fmt.Sprintf("%s_PIN%d", prefix, l.Pin), p.name); err != nil {
			return nil, fmt.Errorf("periphlpt: registering alias of %s: %w", p.name, err)
		}
		pins = append(pins, p)
	}
	return pins, port.Err()
}

// sharedPort serialises the pins' register operations on one port.
type sharedPort struct {
	mu            sync.Mutex
	port          lpt.Port
	data, control uint8 // shadows, so that one pin's Out is one write
}

// portPin is one port line as a periph GPIO pin.
type portPin struct {
	name string
	line lpt.Line
	port *sharedPort
}

var _ gpio.PinIO = (*portPin)(nil)

func (p *portPin) String() string { return p.name }
func (p *portPin) Name() string   { return p.name }

// Number is the DB-25 pin number.
func (p *portPin) Number() int { return p.line.Pin }
func (p *portPin) Halt() error { return nil }

func (p *portPin) Func() pin.Func {
	if p.line.Output() {
		return gpio.OUT
	}
	return gpio.IN
}

func (p *portPin) Function() string           { return string(p.Func()) }
func (p *portPin) SupportedFuncs() []pin.Func { return []pin.Func{p.Func()} }

func (p *portPin) SetFunc(f pin.Func) error {
	if f == p.Func() {
		return nil
	}
	return p.fixed()
}

func (p *portPin) fixed() error {
	dir := "an input"
	if p.line.Output() {
		dir = "an output"
	}
	return fmt.Errorf("periphlpt: %s (DB-25 pin %d) is %s of an SPP port; its direction cannot change", p.name, p.line.Pin, dir)
}

// In accepts the status lines only; SPP inputs float high (pulled up), and
// the port has no edge detection on them.
func (p *portPin) In(pull gpio.Pull, edge gpio.Edge) error {
	if p.line.Output() {
		return p.fixed()
	}
	if edge != gpio.NoEdge {
		return fmt.Errorf("periphlpt: %s: a parallel port has no edge detection on its status lines; poll Read", p.name)
	}
	if pull != gpio.PullNoChange && pull != gpio.PullUp {
		return fmt.Errorf("periphlpt: %s: a parallel port's inputs are pulled up; %s is not available", p.name, pull)
	}
	return nil
}

// Read returns the pin's level: for outputs, what the port drives.
func (p *portPin) Read() gpio.Level {
	s := p.port
	s.mu.Lock()
	var v uint8
	switch p.line.Reg {
	case lpt.Data:
		v = s.port.ReadData()
	case lpt.Control:
		v = s.port.ReadControl()
	default:
		v = s.port.ReadStatus()
	}
	s.mu.Unlock()
	return gpio.Level((v&p.line.Mask != 0) != p.line.Inverted)
}

// WaitForEdge always times out: there is no edge detection (see In).
func (p *portPin) WaitForEdge(time.Duration) bool { return false }

func (p *portPin) Pull() gpio.Pull {
	if p.line.Output() {
		return gpio.PullNoChange
	}
	return gpio.PullUp
}

func (p *portPin) DefaultPull() gpio.Pull { return p.Pull() }

// Out sets an output line's pin level.
func (p *portPin) Out(l gpio.Level) error {
	if !p.line.Output() {
		return p.fixed()
	}
	s := p.port
	s.mu.Lock()
	defer s.mu.Unlock()
	reg := &s.data
	if p.line.Reg == lpt.Control {
		reg = &s.control
	}
	if bool(l) != p.line.Inverted {
		*reg |= p.line.Mask
	} else {
		*reg &^= p.line.Mask
	}
	if p.line.Reg == lpt.Control {
		s.port.WriteControl(s.control)
	} else {
		s.port.WriteData(s.data)
	}
	return s.port.Err()
}

func (p *portPin) PWM(gpio.Duty, physic.Frequency) error {
	return errors.New("periphlpt: " + p.name + ": a parallel port has no PWM")
}
