// Package periphlpt joins TTL_PAPERS printer ports and periph.io GPIO, both
// ways.
//
// A periph driver (registered with driverreg, so host.Init() loads it)
// exposes the 17 lines of each parallel port the kernel knows of as
// gpio.PinIO pins in gpioreg, named "LPT1_D0" … "LPT1_D7", "LPT1_NSTROBE",
// "LPT1_BUSY", … with aliases by DB-25 pin ("LPT1_PIN11" is LPT1_BUSY).
// Levels are pin levels: the SPP register inversions are applied, so
// LPT1_NSTROBE.Out(gpio.Low) pulls pin 1 low. As with periph's own GPIO
// drivers, host.Init() opens nothing: a port is opened (through ppdev,
// else by direct I/O) when one of its pins is first used, and released when
// the pins used are closed.
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
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// DriverName is the name the periph driver registers under.
const DriverName = "lpt"

func init() { driverreg.MustRegister(&drv) }

var drv = driverLPT{
	prefix: "LPT",
	find:   func() []linuxlpt.SystemPort { return linuxlpt.SystemPorts(linuxlpt.FindPorts()) },
	open:   linuxlpt.SystemPort.Open,
}

// driverLPT implements periph's driver.Impl. Like periph's own GPIO drivers
// it only enumerates at Init; a port is opened (and, through ppdev,
// claimed) when one of its pins is first used, and released when every pin
// used has been closed, so a program that uses other GPIO pins, or only
// LPT2, leaves the other ports to whoever else wants them.
type driverLPT struct {
	prefix string                                      // ports are named prefix+"1", prefix+"2", …
	find   func() []linuxlpt.SystemPort                // the ports the system knows of
	open   func(linuxlpt.SystemPort) (lpt.Port, error) // opens (claims) one
}

func (d *driverLPT) String() string        { return DriverName }
func (*driverLPT) Prerequisites() []string { return nil }
func (*driverLPT) After() []string         { return nil }

// Init registers the pins of every parallel port the kernel knows of
// (parportN becomes LPT<N+1>), opening none. With none, the driver is
// skipped (false) with the reason.
func (d *driverLPT) Init() (bool, error) {
	ports := d.find()
	if len(ports) == 0 {
		return false, errors.New("no parallel port known to the kernel (no /dev/parport*, no parport in /proc/ioports): load parport_pc and ppdev")
	}
	for i, sp := range ports {
		n := sp.Number()
		if n < 0 {
			n = i
		}
		name := fmt.Sprintf("%s%d", d.prefix, n+1)
		open := func() (lpt.Port, error) { return d.open(sp) }
		if _, err := register(name, &sharedPort{name: name, open: open, owned: true}); err != nil {
			return true, err
		}
	}
	return true, nil
}

// RegisterPort registers the 17 lines of an open port in gpioreg as
// "<prefix>_<LINE>" (upper case: LPT1_D0, LPT1_NSTROBE, LPT1_BUSY, …) with
// aliases "<prefix>_PIN<n>" by DB-25 pin, and returns them in lpt.Lines
// order. The pins share the port, so they may be used from any goroutine.
// The caller keeps the port: closing the pins does not close it.
func RegisterPort(prefix string, port lpt.Port) ([]gpio.PinIO, error) {
	s := &sharedPort{name: prefix}
	s.attach(port)
	pins, err := register(prefix, s)
	if err != nil {
		return nil, err
	}
	return pins, port.Err()
}

// register puts the pins of s in gpioreg.
func register(prefix string, s *sharedPort) ([]gpio.PinIO, error) {
	pins := make([]gpio.PinIO, 0, len(lpt.Lines))
	for i, l := range lpt.Lines {
		p := &portPin{name: prefix + "_" + strings.ToUpper(l.Name), index: i, line: l, port: s}
		if err := gpioreg.Register(p); err != nil {
			return nil, fmt.Errorf("periphlpt: registering %s: %w", p.name, err)
		}
		if err := gpioreg.RegisterAlias(fmt.Sprintf("%s_PIN%d", prefix, l.Pin), p.name); err != nil {
			return nil, fmt.Errorf("periphlpt: registering alias of %s: %w", p.name, err)
		}
		pins = append(pins, p)
	}
	return pins, nil
}

// sharedPort is one port under its 17 pins: opened when a pin is first
// used, closed (when the driver owns it) once every pin that used it has
// been closed. It serialises the pins' register operations.
type sharedPort struct {
	name  string
	open  func() (lpt.Port, error) // nil for RegisterPort's, always open
	owned bool                     // close the port when no pin uses it

	mu            sync.Mutex
	port          lpt.Port // nil while closed
	users         uint32   // bit i: the pin of lpt.Lines[i] uses the port
	data, control uint8    // shadows, so that one pin's Out is one write
}

// openLocked opens the port unless it is open; s.mu is held.
func (s *sharedPort) openLocked() error {
	if s.port != nil {
		return nil
	}
	port, err := s.open()
	if err != nil {
		return fmt.Errorf("periphlpt: opening %s: %w", s.name, err)
	}
	s.attach(port)
	return port.Err()
}

// attach makes port the open port, its register shadows read from it.
func (s *sharedPort) attach(port lpt.Port) {
	s.port, s.data, s.control = port, port.ReadData(), port.ReadControl()&lpt.ControlPins
}

// use opens the port for pin i, records the pin as a user, and runs op on
// the port unless op is nil.
func (s *sharedPort) use(i int, op func(port lpt.Port) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(); err != nil {
		return err
	}
	s.users |= 1 << i
	if op == nil {
		return nil
	}
	return op(s.port)
}

// release drops pin i as a user, closing the port with the last one.
func (s *sharedPort) release(i int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users &^= 1 << i
	if s.users != 0 || s.port == nil || !s.owned {
		return nil
	}
	err := s.port.Close()
	s.port = nil
	return err
}

// portPin is one port line as a periph GPIO pin.
type portPin struct {
	name  string
	index int // in lpt.Lines
	line  lpt.Line
	port  *sharedPort
}

var _ gpio.PinIO = (*portPin)(nil)

func (p *portPin) String() string { return p.name }
func (p *portPin) Name() string   { return p.name }

// Number is the DB-25 pin number.
func (p *portPin) Number() int { return p.line.Pin }

// Halt has nothing to stop: a port pin runs no operation in the background.
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
	return p.port.use(p.index, nil)
}

// Read returns the pin's level: for outputs, what the port drives. When
// the port cannot be opened it reads Low; In or Out says why.
func (p *portPin) Read() gpio.Level {
	var v uint8
	err := p.port.use(p.index, func(port lpt.Port) error {
		switch p.line.Reg {
		case lpt.Data:
			v = port.ReadData()
		case lpt.Control:
			v = port.ReadControl()
		default:
			v = port.ReadStatus()
		}
		return nil
	})
	if err != nil {
		return gpio.Low
	}
	return gpio.Level((v&p.line.Mask != 0) != p.line.Inverted)
}

// Close releases the pin; the port is closed (and its ppdev claim
// released) when every pin that used it is closed. The pins of
// RegisterPort leave their port open.
func (p *portPin) Close() error { return p.port.release(p.index) }

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
	high := bool(l) != p.line.Inverted // the register bit
	return p.port.use(p.index, func(port lpt.Port) error {
		s := p.port
		if p.line.Reg == lpt.Control {
			s.control = withBit(s.control, p.line.Mask, high)
			port.WriteControl(s.control)
		} else {
			s.data = withBit(s.data, p.line.Mask, high)
			port.WriteData(s.data)
		}
		return port.Err()
	})
}

func withBit(v, mask uint8, set bool) uint8 {
	if set {
		return v | mask
	}
	return v &^ mask
}

func (p *portPin) PWM(gpio.Duty, physic.Frequency) error {
	return errors.New("periphlpt: " + p.name + ": a parallel port has no PWM")
}
