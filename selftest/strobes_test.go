package selftest

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// strobeWatch is a port that records every strobe a data write raises.
type strobeWatch struct {
	lpt.Port
	raised []string
}

func (s *strobeWatch) WriteData(v uint8) {
	if up := v &^ s.Port.ReadData() & lpt.Strobes; up != 0 {
		s.raised = append(s.raised, fmt.Sprintf("%#02x over %#02x", v, s.Port.ReadData()))
	}
	s.Port.WriteData(v)
}

// TestPortChecksKeepStrobes: in multi-PC mode the other PCs may be checking
// in while this one checks its port, so the readback and the latency
// measurement must never raise S0 or S1 — that would complete the others'
// barriers (the old 0x55/0xaa readback raised both). Every start state a
// port can be in is tried: power-on 0x00, a BIOS's 0xaa, a parked 0xcf.
func TestPortChecksKeepStrobes(t *testing.T) {
	p := emulatedPort(t)
	for _, start := range []uint8{0x00, lpt.S0, lpt.S1, 0xaa, 0x55, lpt.Transparent} {
		p.WriteData(start)
		w := &strobeWatch{Port: p}
		rep := &Report{}
		portChecks(rep, w, MultiPC, 100)
		if len(w.raised) != 0 {
			t.Errorf("start %#02x: writes raised a strobe: %v", start, w.raised)
		}
		if len(rep.Checks) != 1 || !rep.Checks[0].Pass {
			t.Errorf("start %#02x: readback of a working port: %+v", start, rep.Checks)
		}
	}
}

// emulatedPort returns PE 0's port of a 2-PE emulated board, closed when
// the test ends.
func emulatedPort(t *testing.T) lpt.Port {
	t.Helper()
	b, err := emu.New(2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Port(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// deadPort reads 0xff whatever is written, as no port at an address does.
type deadPort struct{ lpt.Port }

func (deadPort) ReadData() uint8 { return 0xff }

func TestReadbackFindsNoPort(t *testing.T) {
	rep := &Report{}
	readback(rep, deadPort{emulatedPort(t)})
	if len(rep.Checks) != 1 || rep.Checks[0].Pass || rep.Checks[0].Line != "D0-D7" {
		t.Errorf("a port that reads 0xff must fail the readback on D0-D7: %+v", rep.Checks)
	}
}
