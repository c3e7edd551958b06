package timing

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Variant is one way of doing an operation on the board.
type Variant struct {
	Op   string // "nand", "barrier" or "interrupt"
	Name string
	Ops  int // port operations when nobody is late
	// Shipped marks what package papers does: it must never fail.
	Shipped bool
	Doc     string
	mode    papers.NANDMode
	nand    func(r *rawPE, x uint8) (uint8, error) // nil: the papers driver's NAND
}

// Variants are the operations the trials test: the seed's NAND without
// each of its two safeguards and without both, the driver's NAND in both
// of its modes, and the driver's barrier and interrupt.
var Variants = []Variant{
	{Op: "nand", Name: "naive", Ops: 2, nand: naive,
		Doc: "data and strobes in one write, the result from the read that sees ready: both races"},
	{Op: "nand", Name: "no-resample", Ops: 4, nand: noResample,
		Doc: "as naive, then a trailing barrier: the data still races the ready flag (race a)"},
	{Op: "nand", Name: "no-trailing-barrier", Ops: 3, nand: noTrailingBarrier,
		Doc: "as naive, then a resample: a fast PE may change its data before a slow one reads (race b)"},
	{Op: "nand", Name: "shipped", Ops: 5, Shipped: true, mode: papers.Resample,
		Doc: "papers.NAND: data and strobes, wait, resample, trailing barrier (the seed's 5 operations)"},
	{Op: "nand", Name: "data-first", Ops: 5, Shipped: true, mode: papers.DataFirst,
		Doc: "papers.NAND in DataFirst mode: data, then strobes, wait, trailing barrier (4 when the data does not change)"},
	{Op: "barrier", Name: "shipped", Ops: 2, Shipped: true,
		Doc: "papers.Barrier: no PE may leave before the last one has arrived"},
	{Op: "interrupt", Name: "shipped", Ops: 5, Shipped: true,
		Doc: "papers.Interrupt from PE 0, the others polling CheckInterrupt: every PE gets the code (ops: the raiser's acknowledge when nobody is late)"},
}

// String is "op/name".
func (v Variant) String() string { return v.Op + "/" + v.Name }

// VariantsNamed returns the variants a list of names selects: "nand/naive",
// a bare name for every op's variant of that name ("shipped"), or an op for
// all its variants ("nand").
func VariantsNamed(names []string) ([]Variant, error) {
	var out []Variant
	for _, n := range names {
		found := false
		for _, v := range Variants {
			if strings.EqualFold(n, v.String()) || strings.EqualFold(n, v.Name) || strings.EqualFold(n, v.Op) {
				out, found = append(out, v), true
			}
		}
		if !found {
			var all []string
			for _, v := range Variants {
				all = append(all, v.String())
			}
			return nil, fmt.Errorf("timing: no variant %q: use one of %s, a bare name (naive, shipped, ...) or an op (nand, barrier, interrupt)", n, strings.Join(all, ", "))
		}
	}
	return out, nil
}

// rawPE runs the variants the driver does not ship, straight on the port,
// from where papers.Open left it.
type rawPE struct {
	port lpt.Port
	last uint8 // the data byte last written, as papers keeps it
}

// wait polls until the ready flag shows the barrier just signalled, and
// returns the status that showed it.
func (r *rawPE) wait() (uint8, error) {
	for polls := 1; ; polls++ {
		s := r.port.ReadStatus()
		if (s&lpt.RDY != 0) == (r.last&lpt.S0 != 0) {
			return s, nil
		}
		if polls%64 == 0 {
			if err := r.port.Err(); err != nil {
				return 0, err
			}
		}
	}
}

func (r *rawPE) barrier() error {
	r.last ^= lpt.Strobes
	r.port.WriteData(r.last)
	_, err := r.wait()
	return err
}

// send writes x with the strobes flipped, in one write, and waits for ready.
func (r *rawPE) send(x uint8) (uint8, error) {
	r.last = (r.last^lpt.Strobes)&^lpt.DataMask | x
	r.port.WriteData(r.last)
	return r.wait()
}

func result(s uint8) uint8 { return s >> lpt.InputShift & lpt.DataMask }

func naive(r *rawPE, x uint8) (uint8, error) {
	s, err := r.send(x)
	return result(s), err
}

func noResample(r *rawPE, x uint8) (uint8, error) {
	s, err := r.send(x)
	if err != nil {
		return 0, err
	}
	return result(s), r.barrier()
}

func noTrailingBarrier(r *rawPE, x uint8) (uint8, error) {
	if _, err := r.send(x); err != nil {
		return 0, err
	}
	return result(r.port.ReadStatus()), r.port.Err()
}

// interruptCode is what PE 0 raises in the interrupt trials.
const interruptCode = 0x9

// interrupt runs one parallel interrupt: PE 0 raises it, the others poll
// CheckInterrupt (3 operations each) until they have acknowledged it. It
// returns the code this PE got.
func interrupt(p *papers.PE) (uint8, error) {
	if p.Self() == 0 {
		return p.Interrupt(interruptCode)
	}
	for tries := 0; tries < maxChecks; tries++ {
		err := p.CheckInterrupt()
		var ie *papers.InterruptError
		if errors.As(err, &ie) {
			return ie.Code, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("timing: PE %d saw no interrupt in %d checks", p.Self(), maxChecks)
}

// maxChecks bounds a PE's CheckInterrupt polling: far more than the
// raiser's few operations need.
const maxChecks = 2000
