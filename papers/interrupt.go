package papers

import (
	"errors"
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Interrupt raises a parallel interrupt carrying a 4-bit code and takes part
// in the acknowledge barrier that delivers it. It returns once every PE has
// acknowledged, with the delivered code (the OR of the codes when several
// PEs raise at once). The other PEs notice the interrupt while they wait in
// their next barrier — the raiser holds both strobes low so that every
// barrier stalls until they do — and their operation returns an
// *InterruptError with the code.
func (p *PE) Interrupt(code uint8) (uint8, error) {
	if code > lpt.DataMask {
		return 0, fmt.Errorf("papers: PE %d: interrupt code %#x is wider than 4 bits (use 0 to 0xf)", p.self, code)
	}
	if err := p.usable(); err != nil {
		return 0, err
	}
	// Raise P_IRQ first: its rising edge latches the board's interrupt flag.
	p.port.WriteControl(lpt.NAK | lpt.IRQ)
	return p.acknowledge(true, code)
}

// CheckInterrupt looks for a pending interrupt (the seed's CHECKINT: 2 or 3
// port operations) and, if there is one, acknowledges it and returns an
// *InterruptError carrying its code. It returns nil when none is pending.
func (p *PE) CheckInterrupt() error {
	if err := p.usable(); err != nil {
		return err
	}
	if !p.interruptPending() {
		return nil
	}
	code, err := p.acknowledge(false, 0)
	if err != nil {
		return err
	}
	return &InterruptError{PE: p.self, Op: "CheckInterrupt", Code: code}
}

// interruptPending makes P_INT visible on Busy and reads it. When none is
// pending it restores P_RDY; when one is, acknowledge takes over.
func (p *PE) interruptPending() bool {
	p.port.WriteControl(lpt.SEL | lpt.NAK)
	if p.port.ReadStatus()&lpt.INT != 0 {
		return true
	}
	p.port.WriteControl(lpt.NAK)
	return false
}

// acknowledge runs the interrupt acknowledge barrier, then puts this PE back
// in step with the others:
//
//  1. Hold both strobes low (stalling every barrier) with the data nybble
//     set: the raiser drives the complement of its code, the others 0xf, so
//     the NAND the board presents is the code.
//  2. P_NAK=0 (acknowledge) with P_SEL=1, and wait until the flag clears:
//     it clears only when every PE acknowledges, so every PE has done step 1.
//  3. P_NAK=1, P_SEL=0 and one read: the NAND lines give the code, and the
//     ready flag gives the phase of the last completed barrier, which cannot
//     change while any PE still holds both strobes low.
//  4. Take that phase and run one barrier. It completes only when every PE
//     has done step 3, so no PE changes its data before all have read it.
func (p *PE) acknowledge(raise bool, code uint8) (uint8, error) {
	nybble, ctrl := uint8(lpt.DataMask), uint8(lpt.SEL)
	if raise {
		nybble, ctrl = ^code&lpt.DataMask, lpt.SEL|lpt.IRQ
	}
	p.last = p.last&(lpt.LG|lpt.LR) | nybble
	p.port.WriteData(p.last)
	p.port.WriteControl(ctrl)
	if err := p.slowWait("interrupt acknowledge", true); err != nil {
		p.port.WriteControl(lpt.NAK)
		return 0, err
	}
	p.port.WriteControl(lpt.NAK)
	s := p.port.ReadStatus()
	if s&lpt.RDY != 0 {
		p.last |= lpt.S0
	} else {
		p.last |= lpt.S1
	}
	p.port.WriteData(p.last)
	p.stats.Interrupts++
	return s >> lpt.InputShift & lpt.DataMask, p.Barrier()
}

// Leave takes this PE out of the barrier group: its port goes transparent
// (0xcf) and the others carry on without it. This costs one port write (the
// seed's "partition" operation).
func (p *PE) Leave() error {
	if err := p.usable(); err != nil {
		return err
	}
	p.port.WriteData(lpt.Transparent)
	p.port.WriteControl(0)
	p.state = left
	return nil
}

// Rejoin brings a PE that left back into the group. The others cannot wait
// for a transparent PE, and the strobe phase alone cannot tell where they
// are in a multi-barrier operation, so Rejoin raises a parallel interrupt
// carrying code: the others acknowledge it in their next barrier (which the
// rejoining PE stalls until they do) and their operation returns an
// *InterruptError with the code — the program's cue that the group has
// changed. Every PE is in step afterwards. Rejoin returns the delivered code.
func (p *PE) Rejoin(code uint8) (uint8, error) {
	if p.state != left {
		return 0, errors.New("papers: Rejoin without Leave")
	}
	p.port.WriteData(lpt.LG | lpt.DataMask) // both strobes low: hold every barrier
	p.state = running
	return p.Interrupt(code)
}
