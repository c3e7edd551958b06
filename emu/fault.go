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

func (k FaultKind) String() string { return [...]string{"stuck0", "stuck1", "unplugged"}[k] }

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

// Inject applies a fault. Faults stay until Repair.
func (b *Board) Inject(f Fault) error {
	if f.PE < 0 || f.PE >= len(b.ports) {
		return fmt.Errorf("emu: fault %v: PE %d is not on the %d-PE board", f, f.PE, len(b.ports))
	}
	b.lock()
	defer b.unlock()
	p := b.ports[f.PE]
	switch f.Kind {
	case Unplugged:
		p.set(portPlugged, 0)
	case Stuck0:
		p.set(portStuck0, p.get(portStuck0)|1<<f.Line.Pin)
		p.set(portStuck1, p.get(portStuck1)&^(1<<f.Line.Pin))
	case Stuck1:
		p.set(portStuck1, p.get(portStuck1)|1<<f.Line.Pin)
		p.set(portStuck0, p.get(portStuck0)&^(1<<f.Line.Pin))
	}
	p.driveLocked(p.pins(), true)
	b.markStatus(int32(p.pe))
	b.settle()
	return nil
}

// Plug connects PE k's cable (all connectors up to the emulated PE count are
// plugged at start).
func (b *Board) Plug(pe int) {
	b.lock()
	defer b.unlock()
	p := b.ports[pe]
	p.set(portPlugged, 1)
	p.driveLocked(p.pins(), true)
	b.markStatus(int32(p.pe))
	b.settle()
}

// Repair removes every stuck line of PE k (it does not plug a cable in).
func (b *Board) Repair(pe int) {
	b.lock()
	defer b.unlock()
	p := b.ports[pe]
	p.set(portStuck0, 0)
	p.set(portStuck1, 0)
	p.driveLocked(p.pins(), true)
	b.markStatus(int32(p.pe))
	b.settle()
}
