package boardflag

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/emu"
)

// FaultFlag is the repeatable --inject of selftest, emu serve and hil:
// each fault is parsed as the flag is read, and a second fault on a line
// (or cable) that already has one is refused rather than silently winning.
type FaultFlag struct{ List []emu.Fault }

func (ff *FaultFlag) Define(f *base.FlagSet, usage string) {
	f.Func("inject", "FAULT", ff.add, usage+": PE<k>.<LINE>=stuck0|stuck1 or PE<k>=unplugged, e.g. PE2.D6=stuck0 (repeatable)")
	f.NamesValue("inject")
}

func (ff *FaultFlag) add(s string) error {
	x, err := emu.ParseFault(s)
	if err != nil {
		return err
	}
	for _, g := range ff.List {
		switch {
		case g == x:
			return fmt.Errorf("fault %q given twice", s)
		case g.PE == x.PE && g.Kind != emu.Unplugged && x.Kind != emu.Unplugged && g.Line.Pin == x.Line.Pin:
			return fmt.Errorf("fault %q: PE%d.%s already has one (%v): give one fault per line", s, x.PE, x.Line.Name, g)
		}
	}
	ff.List = append(ff.List, x)
	return nil
}

// Check adds a problem for every fault on a PE the board lacks.
func (ff *FaultFlag) Check(p *base.Problems, pes int) {
	for _, x := range ff.List {
		if err := x.OnBoard(pes); err != nil {
			p.Addf("--inject %v: %v", x, err)
		}
	}
}

// Strings returns the faults as ParseFault reads them.
func (ff *FaultFlag) Strings() []string {
	var s []string
	for _, x := range ff.List {
		s = append(s, x.String())
	}
	return s
}
