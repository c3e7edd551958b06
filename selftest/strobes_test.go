package selftest

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// lineWatch is a port that records every data write that raises a strobe
// or pulls a data line low.
type lineWatch struct {
	lpt.Port
	moved []string
}

func (s *lineWatch) WriteData(v uint8) {
	old := s.Port.ReadData()
	if v&^old&lpt.Strobes != 0 || old&^v&lpt.DataMask != 0 {
		s.moved = append(s.moved, fmt.Sprintf("%#02x over %#02x", v, old))
	}
	s.Port.WriteData(v)
}

// TestPortChecksKeepBoardLines: in multi-PC mode the other PCs may be
// checking in while this one checks its port, so the readback and the
// latency measurement must never raise S0 or S1 — that would complete the
// others' barriers (the old 0x55/0xaa readback raised both) — nor pull a
// data line low, which the others' NANDs read (the 0x15/0x2a readback
// made this PC vote in their check-in). Every start state a port can be
// in is tried: power-on 0x00, a BIOS's 0xaa, a parked 0xcf.
func TestPortChecksKeepBoardLines(t *testing.T) {
	p := emulatedPort(t)
	for _, start := range []uint8{0x00, lpt.S0, lpt.S1, 0xaa, 0x55, lpt.Transparent} {
		p.WriteData(start)
		w := &lineWatch{Port: p}
		rep := &Report{}
		portChecks(rep, w, MultiPC, 100)
		if len(w.moved) != 0 {
			t.Errorf("start %#02x: writes moved a line the others read: %v", start, w.moved)
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
	for _, mode := range []Mode{Single, MultiPC} {
		rep := &Report{}
		readback(rep, deadPort{emulatedPort(t)}, mode)
		if len(rep.Checks) != 1 || rep.Checks[0].Pass || rep.Checks[0].Line != "D0-D7" {
			t.Errorf("%s: a port that reads 0xff must fail the readback on D0-D7: %+v", mode, rep.Checks)
		}
	}
}
