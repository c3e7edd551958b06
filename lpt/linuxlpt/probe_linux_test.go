package linuxlpt

import (
	"fmt"
	"testing"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// regPort is a port that is only registers, and records every strobe a data
// write raises.
type regPort struct {
	data, control uint8
	raised        []string
}

func (p *regPort) WriteData(v uint8) {
	if up := v &^ p.data & lpt.Strobes; up != 0 {
		p.raised = append(p.raised, fmt.Sprintf("%#02x over %#02x", v, p.data))
	}
	p.data = v
}
func (p *regPort) ReadData() uint8      { return p.data }
func (p *regPort) ReadStatus() uint8    { return 0 }
func (p *regPort) WriteControl(v uint8) { p.control = v }
func (p *regPort) ReadControl() uint8   { return p.control }
func (p *regPort) Err() error           { return nil }
func (p *regPort) Close() error         { return nil }

// TestProbeKeepsStrobes: opening a port probes its data register while the
// other PEs may be checking in, so the probe must never raise lpt.S0 or lpt.S1 —
// that would complete their barriers (found by the 4-machine hil demo; no
// test without QEMU guarded it) — and must leave the register as it was.
func TestProbeKeepsStrobes(t *testing.T) {
	for _, start := range []uint8{0x00, lpt.S0, lpt.S1, 0xaa, 0x55, lpt.Transparent} {
		p := &regPort{data: start}
		if err := probeData(p); err != nil {
			t.Errorf("start %#02x: %v", start, err)
		}
		if len(p.raised) != 0 {
			t.Errorf("start %#02x: the probe raised a strobe: %v", start, p.raised)
		}
		if p.data != start {
			t.Errorf("start %#02x: the probe left %#02x", start, p.data)
		}
	}
}
