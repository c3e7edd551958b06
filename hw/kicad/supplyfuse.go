package kicad

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/hw"
)

// inputFuse is a fuse between the power terminal and the supply net: the
// terminal's pin and the fuse's pin on the net between them, and the
// fuse's resistance at most.
type inputFuse struct {
	net          string
	terminal, in hw.Node
	r            float64
}

// findFuse follows the power terminal's pin that is on neither the supply
// net nor GND through the fuse on it (a part with a resistance, RMax) to
// the supply net: the fuse's pin there is where the supply copper is held,
// and the fuse and the copper before it are in series with all of it.
func (l *loads) findFuse(b *hw.Netlist) error {
	for _, c := range b.Components {
		if c.Part != hw.PowerIn {
			continue
		}
		for _, p := range c.Part.Pins {
			term := hw.Node{Ref: c.Ref, Pin: p.Num}
			n := b.NetOf(term)
			if n == nil || n.Name == l.supply || n.Name == hw.GND {
				continue
			}
			f, err := fuseOn(b, n, term, l.supply)
			if err != nil {
				return err
			}
			l.fuse = f
			l.input[l.supply] = append(l.input[l.supply], hw.Node{Ref: f.in.Ref, Pin: 3 - f.in.Pin})
		}
	}
	return nil
}

// fuseOn finds the fuse on net n that joins it to the supply net.
func fuseOn(b *hw.Netlist, n *hw.Net, term hw.Node, supply string) (*inputFuse, error) {
	for _, nd := range n.Nodes {
		p := b.Component(nd.Ref).Part
		if p.RMax == 0 || len(p.Pins) != 2 {
			continue
		}
		if out := b.NetOf(hw.Node{Ref: nd.Ref, Pin: 3 - nd.Pin}); out != nil && out.Name == supply {
			return &inputFuse{net: n.Name, terminal: term, in: nd, r: p.RMax}, nil
		}
	}
	return nil, fmt.Errorf("kicad: %s: power input pin %v is on %s, which reaches %s through no fuse", b.Name, term, n.Name, supply)
}
