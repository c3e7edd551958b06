package periphlpt

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

// fakePort is a port's registers; it counts Close.
type fakePort struct {
	data, control, status uint8
	closes                *int
}

func (p *fakePort) WriteData(v uint8)    { p.data = v }
func (p *fakePort) ReadData() uint8      { return p.data }
func (p *fakePort) ReadStatus() uint8    { return p.status }
func (p *fakePort) WriteControl(v uint8) { p.control = v }
func (p *fakePort) ReadControl() uint8   { return p.control }
func (p *fakePort) Err() error           { return nil }
func (p *fakePort) Close() error         { *p.closes++; return nil }

// fakeSystem is a machine with two parallel ports that counts how often
// each is opened (claimed) and closed.
type fakeSystem struct {
	opens, closes [2]int
	ports         [2]*fakePort
	fail          error // when set, opening fails with it
}

var driverPrefixes atomic.Int32

// driver returns a driver on the fake system, naming its ports uniquely
// (gpioreg is global).
func (f *fakeSystem) driver() (*driverLPT, string) {
	prefix := fmt.Sprintf("FAKELPT%dP", driverPrefixes.Add(1))
	return &driverLPT{
		prefix: prefix,
		find: func() []linuxlpt.SystemPort {
			return []linuxlpt.SystemPort{{Name: "parport0", Base: lpt.BaseLPT1, Dev: "/dev/parport0"}, {Name: "parport1", Dev: "/dev/parport1"}}
		},
		open: func(sp linuxlpt.SystemPort) (lpt.Port, error) {
			if f.fail != nil {
				return nil, f.fail
			}
			n := sp.Number()
			f.opens[n]++
			f.ports[n] = &fakePort{status: 0x78, closes: &f.closes[n]}
			return f.ports[n], nil
		},
	}, prefix
}

func pinNamed(t *testing.T, name string) gpio.PinIO {
	t.Helper()
	p := gpioreg.ByName(name)
	if p == nil {
		t.Fatalf("%s is not registered", name)
	}
	return p
}

// TestInitClaimsNothing: loading the driver (host.Init, which any GPIO use
// runs) and driving a board through other GPIO pins opens no port.
func TestInitClaimsNothing(t *testing.T) {
	var sys fakeSystem
	d, prefix := sys.driver()
	if ok, err := d.Init(); !ok || err != nil {
		t.Fatalf("Init() = %v, %v", ok, err)
	}
	for _, name := range []string{prefix + "1_D0", prefix + "2_BUSY", prefix + "1_PIN11"} {
		pinNamed(t, name)
	}
	var pins Pins
	for i := range pins {
		pins[i] = &gpiotest.Pin{N: fmt.Sprint("OTHER", i)}
	}
	p, err := NewPort(Config{Pins: pins})
	if err != nil {
		t.Fatal(err)
	}
	p.WriteData(lpt.Transparent)
	p.ReadStatus()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if sys.opens != [2]int{} {
		t.Errorf("ports opened %v times: Init and other GPIO use must claim no parallel port", sys.opens)
	}
}

// TestPortClaimedOnUse: a port is opened when one of its pins is first
// used, only that port, once for all its pins, and closed when the last pin
// used is closed.
func TestPortClaimedOnUse(t *testing.T) {
	var sys fakeSystem
	d, prefix := sys.driver()
	if _, err := d.Init(); err != nil {
		t.Fatal(err)
	}
	d0, busy := pinNamed(t, prefix+"1_D0"), pinNamed(t, prefix+"1_BUSY")
	if err := d0.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	if sys.opens != [2]int{1, 0} {
		t.Fatalf("after LPT1 D0.Out: opens %v, want [1 0]", sys.opens)
	}
	if sys.ports[0].data&lpt.D0 == 0 {
		t.Errorf("D0.Out(High) left data %#x", sys.ports[0].data)
	}
	if err := busy.In(gpio.PullUp, gpio.NoEdge); err != nil {
		t.Fatal(err)
	}
	if busy.Read() != gpio.High { // status 0x78: Busy bit clear, inverted: pin 11 high
		t.Error("Busy reads low with status bit 7 clear")
	}
	if sys.opens != [2]int{1, 0} {
		t.Fatalf("second pin of LPT1: opens %v, want [1 0]", sys.opens)
	}
	closer := func(p gpio.PinIO) interface{ Close() error } { return p.(interface{ Close() error }) }
	if err := closer(d0).Close(); err != nil || sys.closes[0] != 0 {
		t.Fatalf("closing D0 while Busy is in use: %v, %d closes", err, sys.closes[0])
	}
	if err := closer(busy).Close(); err != nil || sys.closes[0] != 1 {
		t.Fatalf("closing the last pin in use: %v, %d closes, want 1", err, sys.closes[0])
	}
	if err := d0.Out(gpio.Low); err != nil || sys.opens != [2]int{2, 0} {
		t.Errorf("using LPT1 again: %v, opens %v, want [2 0]", err, sys.opens)
	}
}

func TestPortOpenFailure(t *testing.T) {
	sys := fakeSystem{fail: errors.New("port busy")}
	d, prefix := sys.driver()
	if _, err := d.Init(); err != nil {
		t.Fatalf("Init must not open a port, but failed: %v", err)
	}
	if err := pinNamed(t, prefix+"2_D3").Out(gpio.High); err == nil || !strings.Contains(err.Error(), prefix+"2") || !strings.Contains(err.Error(), "port busy") {
		t.Errorf("Out on an unopenable port: %v, want an error naming %s2 and the cause", err, prefix)
	}
	if err := pinNamed(t, prefix+"2_NACK").In(gpio.PullUp, gpio.NoEdge); err == nil {
		t.Error("In on an unopenable port succeeded")
	}
}

func TestInitWithoutPorts(t *testing.T) {
	d := &driverLPT{prefix: "NONE", find: func() []linuxlpt.SystemPort { return nil }}
	if ok, err := d.Init(); ok || err == nil || !strings.Contains(err.Error(), "no parallel port known") {
		t.Errorf("Init() with no port = %v, %v; want skipped with the reason", ok, err)
	}
}

// TestRegisterPortKeepsCallersPort: closing the pins of RegisterPort does
// not close the port the caller handed over.
func TestRegisterPortKeepsCallersPort(t *testing.T) {
	closes := 0
	prefix := fmt.Sprintf("FAKELPT%dR", driverPrefixes.Add(1))
	pins, err := RegisterPort(prefix, &fakePort{closes: &closes})
	if err != nil {
		t.Fatal(err)
	}
	if err := pins[1].Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	if err := pins[1].(interface{ Close() error }).Close(); err != nil || closes != 0 {
		t.Errorf("closing a pin: %v, the caller's port closed %d times", err, closes)
	}
}
