package periphlpt_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/pin"
	"periph.io/x/host/v3"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
	"github.com/ttlpapers/ttlpapers/lpt/periphlpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// cable wires gpiotest pins to an emulated port, as the DB-25 cable wires
// GPIO header pins to the board: output pin levels become the emulated
// port's registers (undoing the port's inversions here, from lpt.Lines,
// so the emulator re-applies them and the board sees the GPIO levels), and
// the emulated status becomes the input pins' levels.
type cable struct {
	port   *emu.Port
	pins   periphlpt.Pins
	raw    [len(lpt.Lines)]*gpiotest.Pin
	pushes int
}

func newCable(t *testing.T, port *emu.Port, prefix string) *cable {
	c := &cable{port: port}
	for i, l := range lpt.Lines {
		// High: a GPIO not yet driven leaves the board's TTL input floating high.
		c.raw[i] = &gpiotest.Pin{N: fmt.Sprintf("%s%d", prefix, l.Pin), Num: l.Pin, L: gpio.High}
		if l.Output() {
			c.pins[i] = outPin{c.raw[i], c}
		} else {
			c.pins[i] = inPin{c.raw[i], c, l}
		}
	}
	return c
}

// push copies the output pin levels onto the emulated port's registers.
func (c *cable) push() {
	c.pushes++
	var data, control uint8
	for i, l := range lpt.Lines {
		if !l.Output() || bool(c.raw[i].Read()) == l.Inverted {
			continue
		}
		if l.Reg == lpt.Data {
			data |= l.Mask
		} else {
			control |= l.Mask
		}
	}
	c.port.WriteData(data)
	c.port.WriteControl(control)
}

type outPin struct {
	*gpiotest.Pin
	c *cable
}

func (p outPin) Out(l gpio.Level) error {
	p.Pin.Out(l)
	p.c.push()
	return nil
}

type inPin struct {
	*gpiotest.Pin
	c    *cable
	line lpt.Line
}

func (p inPin) Read() gpio.Level {
	return gpio.Level((p.c.port.ReadStatus()&p.line.Mask != 0) != p.line.Inverted)
}

// group is a bulk gpio.Group over gpiotest pins that pushes once per Out.
type group struct {
	c     *cable
	pins  []gpio.PinIO
	outs  int
	reads int
}

func newGroup(c *cable, outputs bool) *group {
	g := &group{c: c}
	for i := len(lpt.Lines) - 1; i >= 0; i-- { // an order unlike lpt.Lines
		if lpt.Lines[i].Output() == outputs {
			g.pins = append(g.pins, c.pins[i])
		}
	}
	return g
}

func (g *group) Pins() []pin.Pin {
	ps := make([]pin.Pin, len(g.pins))
	for i, p := range g.pins {
		ps[i] = p
	}
	return ps
}
func (g *group) ByOffset(i int) pin.Pin { return g.pins[i] }
func (g *group) ByName(string) pin.Pin  { return nil }
func (g *group) ByNumber(int) pin.Pin   { return nil }
func (g *group) String() string         { return "testgroup" }
func (g *group) Halt() error            { return nil }
func (g *group) WaitForEdge(time.Duration) (int, gpio.Edge, error) {
	return 0, gpio.NoEdge, gpio.ErrGroupFeatureNotImplemented
}

func (g *group) Out(value, mask gpio.GPIOValue) error {
	g.outs++
	for i, p := range g.pins {
		if mask&(1<<i) != 0 {
			p.(outPin).Pin.Out(value&(1<<i) != 0)
		}
	}
	g.c.push()
	return nil
}

func (g *group) Read(mask gpio.GPIOValue) (gpio.GPIOValue, error) {
	g.reads++
	var v gpio.GPIOValue
	for i, p := range g.pins {
		if mask&(1<<i) != 0 && p.Read() {
			v |= 1 << i
		}
	}
	return v, nil
}

// runCluster runs a 4-PE program — barriers and NANDs of distinct values —
// with PE 0 on port0 and the others on the board's emulated ports.
func runCluster(t *testing.T, b *emu.Board, port0 lpt.Port) {
	t.Helper()
	const n, rounds = 4, 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for k := 0; k < n; k++ {
		var port lpt.Port = port0
		if k > 0 {
			ep, err := b.Port(k)
			if err != nil {
				t.Fatal(err)
			}
			port = ep
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pe, err := papers.Open(port, papers.Config{PE: k, PEs: n, Timeout: 10 * time.Second})
			if err != nil {
				errs[k] = err
				return
			}
			defer pe.Close()
			for r := 0; r < rounds; r++ {
				if err := pe.Barrier(); err != nil {
					errs[k] = err
					return
				}
				got, err := pe.NAND(contribution(k, r))
				if err != nil {
					errs[k] = err
					return
				}
				want := uint8(0x0f)
				for j := 0; j < n; j++ {
					want &= contribution(j, r)
				}
				if want = ^want & 0x0f; got != want {
					errs[k] = fmt.Errorf("PE %d round %d: NAND %#x, want %#x", k, r, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

var prefixes atomic.Int32

// uniquePrefix names a test port, since gpioreg is global (go test -count).
func uniquePrefix() string { return fmt.Sprintf("LPTTEST%d", prefixes.Add(1)) }

func contribution(pe, round int) uint8 { return uint8(pe*5+round*3) & 0x0f }

func TestGPIOPortDrivesBoard(t *testing.T) {
	for _, bulk := range []bool{false, true} {
		t.Run(fmt.Sprintf("bulk=%v", bulk), func(t *testing.T) {
			b, err := emu.New(4)
			if err != nil {
				t.Fatal(err)
			}
			ep, _ := b.Port(0)
			c := newCable(t, ep, "GPIO")
			cfg := periphlpt.Config{Pins: c.pins}
			var out, in *group
			if bulk {
				out, in = newGroup(c, true), newGroup(c, false)
				cfg.Out, cfg.In = out, in
			}
			p, err := periphlpt.NewPort(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The board sees what a real port would drive.
			if ep.ReadData() != lpt.DataMask || ep.ReadControl() != 0 {
				t.Fatalf("idle state: emulated port has data %#x control %#x", ep.ReadData(), ep.ReadControl())
			}
			if c.raw[0].Read() != gpio.High { // nStrobe, inverted: NAK=0 drives pin 1 high
				t.Error("control NAK=0 left nStrobe (pin 1) low")
			}
			p.WriteData(0x5a)
			p.WriteControl(lpt.NAK | lpt.SEL)
			if ep.ReadData() != 0x5a || ep.ReadControl() != lpt.NAK|lpt.SEL {
				t.Errorf("wrote 0x5a, %#x: board sees %#x, %#x", lpt.NAK|lpt.SEL, ep.ReadData(), ep.ReadControl())
			}
			if got, want := p.ReadStatus()&lpt.StatusPins, ep.ReadStatus()&lpt.StatusPins; got != want {
				t.Errorf("status through GPIO %#x, emulated port %#x", got, want)
			}
			p.WriteControl(lpt.NAK)
			pushes, outs := c.pushes, 0
			if bulk {
				outs = out.outs
			}
			runCluster(t, b, p)
			if err := p.Err(); err != nil {
				t.Error(err)
			}
			if bulk {
				if out.outs == outs || in.reads == 0 || c.pushes-pushes != out.outs-outs {
					t.Errorf("groups unused: %d bulk writes, %d bulk reads, %d cable updates", out.outs-outs, in.reads, c.pushes-pushes)
				}
			}
		})
	}
}

func TestGPIOPortAllocs(t *testing.T) {
	var pins periphlpt.Pins
	for i := range pins {
		pins[i] = &gpiotest.Pin{N: fmt.Sprint("P", i)}
	}
	p, err := periphlpt.NewPort(periphlpt.Config{Pins: pins})
	if err != nil {
		t.Fatal(err)
	}
	v := uint8(0)
	if a := testing.AllocsPerRun(100, func() { v++; p.WriteData(v); p.ReadStatus() }); a != 0 {
		t.Errorf("%v allocations per write and status read", a)
	}
}

func TestDriverPins(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := b.Port(0)
	prefix := uniquePrefix()
	pins, err := periphlpt.RegisterPort(prefix, ep)
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != len(lpt.Lines) {
		t.Fatalf("%d pins, want %d", len(pins), len(lpt.Lines))
	}
	for _, l := range lpt.Lines {
		name := prefix + "_" + strings.ToUpper(l.Name)
		p := gpioreg.ByName(name)
		if p == nil {
			t.Fatalf("%s not registered", name)
		}
		if alias := gpioreg.ByName(fmt.Sprintf("%s_PIN%d", prefix, l.Pin)); alias == nil || alias.Name() != fmt.Sprintf("%s_PIN%d", prefix, l.Pin) {
			t.Errorf("alias for pin %d missing", l.Pin)
		} else if r, ok := alias.(gpio.RealPin); !ok || r.Real().Name() != name {
			t.Errorf("alias %s_PIN%d does not lead to %s", prefix, l.Pin, name)
		}
		if !l.Output() {
			if err := p.Out(gpio.High); err == nil {
				t.Errorf("%s: Out on an input line succeeded", name)
			}
			if err := p.In(gpio.PullDown, gpio.NoEdge); err == nil {
				t.Errorf("%s: pull-down accepted", name)
			}
			if want := gpio.Level((ep.ReadStatus()&l.Mask != 0) != l.Inverted); p.Read() != want {
				t.Errorf("%s reads %v, status register says %v", name, p.Read(), want)
			}
			continue
		}
		if err := p.In(gpio.PullNoChange, gpio.NoEdge); err == nil {
			t.Errorf("%s: In on an output line succeeded", name)
		}
		for _, level := range []gpio.Level{gpio.High, gpio.Low} {
			if err := p.Out(level); err != nil {
				t.Fatal(err)
			}
			reg := ep.ReadData()
			if l.Reg == lpt.Control {
				reg = ep.ReadControl()
			}
			if set := reg&l.Mask != 0; set != (bool(level) != l.Inverted) {
				t.Errorf("%s.Out(%v): register bit %#x is %v (inverted line: %v)", name, level, l.Mask, set, l.Inverted)
			}
			if p.Read() != level {
				t.Errorf("%s.Out(%v) then Read gives %v", name, level, p.Read())
			}
		}
	}
}

// TestGPIOPortOnDriverPins runs PE 0 through a GPIO-backed port on the
// driver's pins of an emulated port: both inversions must cancel.
func TestGPIOPortOnDriverPins(t *testing.T) {
	b, err := emu.New(4)
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := b.Port(0)
	prefix := uniquePrefix()
	if _, err := periphlpt.RegisterPort(prefix, ep); err != nil {
		t.Fatal(err)
	}
	var m []string
	for _, l := range lpt.Lines {
		m = append(m, l.Name+"="+prefix+"_"+strings.ToUpper(l.Name))
	}
	p, err := periphlpt.Open(strings.Join(m, ","))
	if err != nil {
		t.Fatal(err)
	}
	runCluster(t, b, p)
}

func TestResolveUnknownPins(t *testing.T) {
	var m gpiomap.Mapping
	for i := range m {
		m[i] = fmt.Sprintf("NOSUCHPIN%d", i) // no host has these
	}
	if _, err := periphlpt.Resolve(m); err == nil || !strings.Contains(err.Error(), "no GPIO pin named") {
		t.Errorf("resolving unknown pins: %v", err)
	}
}

// TestHostFindsDriver checks that host.Init() runs the driver: loaded when
// the kernel knows of a port, otherwise skipped with the reason.
func TestHostFindsDriver(t *testing.T) {
	state, err := host.Init()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range state.Loaded {
		if d.String() == periphlpt.DriverName {
			if gpioreg.ByName("LPT1_D0") == nil && gpioreg.ByName("LPT2_D0") == nil && gpioreg.ByName("LPT3_D0") == nil {
				t.Error("driver loaded but registered no LPTn pins")
			}
			return
		}
	}
	for _, f := range state.Skipped {
		if f.D.String() == periphlpt.DriverName {
			if !strings.Contains(f.Err.Error(), "no parallel port known") {
				t.Errorf("skip reason %q does not say why", f.Err)
			}
			t.Logf("skipped as expected here: %v", f.Err)
			return
		}
	}
	t.Errorf("driver %q neither loaded nor skipped: %+v", periphlpt.DriverName, state)
}
