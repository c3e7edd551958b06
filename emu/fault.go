package emu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// FaultKind is what is wrong with a cable line.
type FaultKind uint8

const (
	Stuck0    FaultKind = iota // the line is held low (short to ground)
	Stuck1                     // the line is held high (short to VCC, or open at the input)
	Unplugged                  // the whole cable is disconnected
)

func (k FaultKind) String() string {
	if k > Unplugged {
		return fmt.Sprintf("FaultKind(%d)", uint8(k))
	}
	return [...]string{"stuck0", "stuck1", "unplugged"}[k]
}

// Fault is a fault on PE k's cable. Faults are on the cable between the PC's
// port and the board: a stuck PC-driven line is seen by the board, a stuck
// input line is seen by the PC only.
type Fault struct {
	PE   int
	Line lpt.Line // unused for Unplugged
	Kind FaultKind
}

func (f Fault) String() string {
	if f.Kind == Unplugged {
		return fmt.Sprintf("PE%d=unplugged", f.PE)
	}
	return fmt.Sprintf("PE%d.%s=%s", f.PE, f.Line.Name, f.Kind)
}

// ParseFault parses "PE<k>.<LINE>=stuck0|stuck1" or "PE<k>=unplugged".
func ParseFault(s string) (Fault, error) {
	bad := func(why string) (Fault, error) {
		return Fault{}, fmt.Errorf("emu: bad fault %q: %s (write PE<k>.<LINE>=stuck0, PE<k>.<LINE>=stuck1 or PE<k>=unplugged, e.g. PE2.D6=stuck0)", s, why)
	}
	lhs, kind, ok := strings.Cut(s, "=")
	if !ok {
		return bad("no '='")
	}
	pe, line, hasLine := strings.Cut(lhs, ".")
	if len(pe) < 3 || !strings.EqualFold(pe[:2], "PE") {
		return bad("it must start with PE<k>")
	}
	k, err := strconv.Atoi(pe[2:])
	if err != nil || k < 0 {
		return bad("the PE number is not a number")
	}
	f := Fault{PE: k}
	switch strings.ToLower(kind) {
	case "unplugged":
		if hasLine {
			return bad("unplugged applies to a whole cable, not a line")
		}
		f.Kind = Unplugged
		return f, nil
	case "stuck0":
		f.Kind = Stuck0
	case "stuck1":
		f.Kind = Stuck1
	default:
		return bad("the fault must be stuck0, stuck1 or unplugged")
	}
	if !hasLine {
		return bad("stuck faults need a line")
	}
	if f.Line, err = lpt.LineByName(line); err != nil {
		return bad(err.Error())
	}
	return f, nil
}

// OnBoard reports, as an error that says why not, whether f's PE is one
// of a board's pes PEs.
func (f Fault) OnBoard(pes int) error {
	if f.PE < 0 || f.PE >= pes {
		return fmt.Errorf("PE %d is not on the %d-PE board (PEs 0 to %d)", f.PE, pes, pes-1)
	}
	return nil
}

// Inject applies a fault. Faults stay until Repair.
func (b *Board) Inject(f Fault) error {
	if err := f.OnBoard(len(b.ports)); err != nil {
		return fmt.Errorf("emu: fault %v: %w", f, err)
	}
	return b.changeFault(f.PE, func(plugged bool, stuck0, stuck1 uint32) (bool, uint32, uint32) {
		pin := uint32(1) << f.Line.Pin
		switch f.Kind {
		case Unplugged:
			plugged = false
		case Stuck0:
			stuck0, stuck1 = stuck0|pin, stuck1&^pin
		case Stuck1:
			stuck0, stuck1 = stuck0&^pin, stuck1|pin
		}
		return plugged, stuck0, stuck1
	})
}

// Plug connects PE k's cable (all connectors up to the emulated PE count are
// plugged at start).
func (b *Board) Plug(pe int) error {
	return b.changeFault(pe, func(_ bool, stuck0, stuck1 uint32) (bool, uint32, uint32) { return true, stuck0, stuck1 })
}

// Repair removes every stuck line of PE k (it does not plug a cable in).
func (b *Board) Repair(pe int) error {
	return b.changeFault(pe, func(plugged bool, _, _ uint32) (bool, uint32, uint32) { return plugged, 0, 0 })
}

// changeFault changes connector k's fault word (compare-and-swap, so that
// injectors in several processes never lose a change) and settles the
// board.
func (b *Board) changeFault(k int, change func(plugged bool, stuck0, stuck1 uint32) (bool, uint32, uint32)) error {
	if k < 0 || k >= len(b.ports) {
		return fmt.Errorf("emu: PE %d is not on the %d-PE board", k, len(b.ports))
	}
	if err := b.err(); err != nil {
		return err
	}
	defer b.survive(b.guard())
	i := b.lay.fault(k)
	var err error
	b.mutate(func() {
		for {
			old := b.m.load(i)
			seq := old >> faultSeqShift
			if seq == faultMaxSeq {
				err = fmt.Errorf("emu: PE %d: too many fault changes on one board (%d): make a new board", k, seq)
				return
			}
			plugged, stuck0, stuck1 := change(faultInfo(old))
			if b.m.cas(i, old, faultWord(seq+1, stuck0, stuck1, plugged)) {
				return
			}
		}
	})
	return err
}

// Change applies one fault change written as text, the form papersctl emu
// fault and a served board's faults file take: a fault as ParseFault reads
// it (PE<k>.<LINE>=stuck0|stuck1, PE<k>=unplugged, or PE<k>=unplug), or
// PE<k>=replug (plug the cable back in) or PE<k>=repair (clear every stuck
// line of PE k).
func (b *Board) Change(s string) error {
	lhs, what, _ := strings.Cut(strings.TrimSpace(s), "=")
	if what == "replug" || what == "repair" || what == "unplug" {
		k, err := strconv.Atoi(strings.TrimPrefix(lhs, "PE"))
		if err != nil || !strings.HasPrefix(lhs, "PE") {
			return fmt.Errorf("emu: bad fault change %q: write PE<k>=%s, e.g. PE1=%s", s, what, what)
		}
		switch what {
		case "replug":
			return b.Plug(k)
		case "repair":
			return b.Repair(k)
		}
		s = lhs + "=unplugged"
	}
	f, err := ParseFault(s)
	if err != nil {
		return fmt.Errorf("%w; or PE<k>=replug, PE<k>=repair", err)
	}
	return b.Inject(f)
}

// Faults lists the faults the board has now, connector by connector: an
// unplugged cable, then each stuck line in pin order.
func (b *Board) Faults() []Fault {
	var fs []Fault
	for k := range b.ports {
		plugged, stuck0, stuck1 := faultInfo(b.m.load(b.lay.fault(k)))
		if !plugged {
			fs = append(fs, Fault{PE: k, Kind: Unplugged})
		}
		for _, l := range lpt.Lines {
			switch pin := uint32(1) << l.Pin; {
			case stuck0&pin != 0:
				fs = append(fs, Fault{PE: k, Kind: Stuck0, Line: l})
			case stuck1&pin != 0:
				fs = append(fs, Fault{PE: k, Kind: Stuck1, Line: l})
			}
		}
	}
	return fs
}
