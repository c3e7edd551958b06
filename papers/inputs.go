package papers

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// A PE reads every NAND through its own status inputs (nError, Select,
// PaperOut, nAck: the NAND's bits 0 to 3). One stuck on its cable or port
// makes that PE alone read the board wrong, while the others read it
// right: it would take a healthy PE for absent, a good line for stuck,
// and fall out of step with the others' check-in. Check-in finds it
// before its votes (probeInputs) and names it as that PE's own input.

// anyPE reports whether any PE there says b: one NAND, every PE that says
// so driving 0x0, the others 0xf. It reads true when at least two of the
// four bits read 1, so that one status input stuck at either level does
// not change what a PE reads, and every PE decides alike.
func (p *PE) anyPE(op string, b bool) (bool, error) {
	x := uint8(lpt.DataMask)
	if b {
		x = 0
	}
	r, err := p.nand(op, x)
	return bits.OnesCount8(r) >= 2, err
}

// whoPEs returns the PEs among the first n ids that say b: anyPE once for
// each id, in which only that PE may drive.
func (p *PE) whoPEs(op string, b bool, n int) (peset.Set, error) {
	var who peset.Set
	for k := range n {
		said, err := p.anyPE(op, b && k == p.self)
		if err != nil {
			return 0, err
		}
		if said {
			who |= 1 << k
		}
	}
	return who, nil
}

// probeInputs runs, in check-in, once compareIdentity's PEs found their
// digests differ, two NANDs that every PE reads alike on a sound board:
// every PE driving 0xf (it reads 0x0), then every PE driving 0x0 (0xf). A
// bit that reads otherwise is a status input stuck at 1 or at 0, or, when
// every PE reads it, a data line stuck at 0 at the board: the vote's line
// test names that (PE.stuck). A PE whose own inputs read wrong, while
// others read right, is named by every PE, with the input and its pin
// (*InputError). It returns nil when no PE read wrong: the digests really
// differ, and agree names who differs.
func (p *PE) probeInputs() error {
	const op = "check-in"
	hi, err := p.nand(op, lpt.DataMask)
	if err != nil {
		return err
	}
	lo, err := p.nand(op, 0)
	if err != nil {
		return err
	}
	lo = ^lo & lpt.DataMask
	bad := hi|lo != 0
	someBad, err := p.anyPE(op, bad)
	if err != nil || !someBad {
		return err
	}
	someGood, err := p.anyPE(op, !bad)
	if err != nil {
		return err
	}
	if !someGood {
		p.stuck = hi // every PE reads it: the board's, not an input's
		return nil
	}
	who, err := p.whoPEs(op, bad, lpt.MaxPEs) // every id: the PE counts may differ
	if err != nil {
		return err
	}
	// Each PE that reads wrong says which of its inputs, which the
	// others read right.
	e := &InputError{PE: p.self, Faulty: who}
	for _, k := range who.Members() {
		h, err := p.broadcastWord(k, uint64(hi), 4)
		if err != nil {
			return err
		}
		l, err := p.broadcastWord(k, uint64(lo), 4)
		if err != nil {
			return err
		}
		if k == p.self {
			h, l = uint64(hi), uint64(lo)
		}
		for i := range 4 {
			for level, m := range [2]uint64{l, h} {
				if m&(1<<i) != 0 {
					e.Inputs = append(e.Inputs, StuckInput{PE: k, Line: statusInput(i), Stuck: uint8(level)})
				}
			}
		}
	}
	return e
}

// statusInput is the status input that carries the NAND's bit i.
func statusInput(i int) lpt.Line {
	l, _ := lpt.LineFor(lpt.Status, 1<<(i+lpt.InputShift))
	return l
}

// StuckInput is one PE's status input that reads the same level whatever
// the board drives.
type StuckInput struct {
	PE    int
	Line  lpt.Line // nError, Select, PaperOut or nAck
	Stuck uint8    // the level it reads, 0 or 1
}

// InputError reports PEs whose own status inputs read the board wrong
// while the other PEs read it right: a fault of those PEs' cables or
// ports, not of the board, found at check-in. Every PE there reports it
// alike.
type InputError struct {
	PE     int       // the PE that found it
	Faulty peset.Set // the PEs that read wrong
	Inputs []StuckInput
}

func (e *InputError) Error() string {
	var parts []string
	for _, in := range e.Inputs {
		whose := fmt.Sprintf("PE %d's", in.PE)
		if in.PE == e.PE {
			whose = "this PE's own"
		}
		parts = append(parts, fmt.Sprintf("%s status input %s is stuck at %d: it reads bit %d of every NAND as %d whatever the board drives", whose, in.Line, in.Stuck, bits.TrailingZeros8(in.Line.Mask)-lpt.InputShift, in.Stuck))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%s read the board wrong", e.Faulty))
	}
	return fmt.Sprintf("papers: PE %d: check-in: %s; the other PEs read the board right, so the fault is on that PE's cable or port, not the board (papersctl selftest on that PC)", e.PE, strings.Join(parts, "; "))
}

// ErrorPE is the PE the error is about.
func (e *InputError) ErrorPE() int { return e.PE }
