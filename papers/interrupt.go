package papers

import (
	"cmp"
	"errors"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// Interrupt raises a parallel interrupt carrying a 4-bit code and takes part
// in the acknowledge barrier that delivers it. It returns once every PE has
// acknowledged, with the delivered code (the OR of the codes when several
// PEs raise at once). The other PEs notice the interrupt while they wait in
// their next barrier — the raiser holds both strobes low so that every
// barrier stalls until they do — and their operation returns an
// *InterruptError with the code. Like every acknowledge it ends with a vote
// of the PEs that stay, which refreshes Participants on every PE.
func (p *PE) Interrupt(code uint8) (uint8, error) {
	if code > lpt.DataMask {
		return 0, p.errorf("Interrupt: %w: code %#x is wider than 4 bits (use 0 to 0xf)", ErrArgument, code)
	}
	if err := p.usable("Interrupt"); err != nil {
		return 0, err
	}
	if p.eng != nil {
		return p.engineRaise("Interrupt", code, false)
	}
	// Raise P_IRQ first: its rising edge latches the board's interrupt flag.
	p.port.WriteControl(lpt.NAK | lpt.IRQ)
	return p.acknowledge(true, code)
}

// CheckInterrupt looks for a pending interrupt (the seed's CHECKINT: 3 port
// operations when none is pending, 5 when one is) and, if there is one, acknowledges it and returns an
// *InterruptError carrying its code. It returns nil when none is pending.
func (p *PE) CheckInterrupt() error {
	if err := p.usable("CheckInterrupt"); err != nil {
		return err
	}
	if p.eng != nil {
		return p.fromEngine(p.eng.CheckInterrupt("CheckInterrupt"))
	}
	if !p.interruptPending() {
		return nil
	}
	code, err := p.acknowledge(false, 0)
	if err != nil {
		return err
	}
	return p.interruptError("CheckInterrupt", code)
}

// interruptPending makes P_INT visible on Busy and reads it. When none is
// pending it restores P_RDY; when one is, acknowledge takes over.
//
// P_SEL is an open-collector control line that rises slowly into a long
// cable, so a fast port's first read may still see the ready flag through
// the Busy multiplexer, which reads as an interrupt half the time
// (docs/timing.md). A clear reading is believed at once (a real interrupt
// missed now is seen at the next check); a set one only if it holds for
// confirmReads more reads, about 0.8 µs on a 0.2 µs PCIe port: ten metres
// of cable.
func (p *PE) interruptPending() bool {
	p.port.WriteControl(lpt.SEL | lpt.NAK)
	for range 1 + confirmReads {
		if p.port.ReadStatus()&lpt.INT == 0 {
			p.port.WriteControl(lpt.NAK)
			return false
		}
	}
	return true
}

// confirmReads is how many more reads must show an interrupt after the
// first (see interruptPending), and how many reads the acknowledge lets
// pass before it trusts the interrupt flag.
const confirmReads = 3

// acknowledge runs the interrupt acknowledge barrier, puts this PE back in
// step with the others, and learns who takes part from now on:
//
//  1. Hold both strobes low (stalling every barrier) with the data nybble
//     set: the raiser drives the complement of its code, the others 0xf, so
//     the NAND the board presents is the code.
//  2. P_NAK=0 (acknowledge) with P_SEL=1, and wait until the flag clears:
//     it clears only when every PE acknowledges, so every PE has done step 1.
//     A PE that has left acknowledges forever (its P_NAK stays 0).
//  3. P_NAK=1, P_SEL=0 and one read: the NAND lines give the code, and the
//     ready flag gives the phase of the last completed barrier, which cannot
//     change while any PE still holds both strobes low.
//  4. Take that phase and run one barrier. It completes only when every PE
//     has done step 3, so no PE changes its data before all have read it.
//  5. A vote of "I take part": the new set of participants, the same on
//     every PE (for ReturnCode, checked by a second vote of the
//     complement). A PE departing with this interrupt (Leave, Abort) votes
//     false and then goes transparent; PEs that left earlier and unplugged
//     cables read as absent, a PE that rejoined as present. (Abandon does
//     not know the PE count: it goes transparent at once, which reads as
//     absent too.) In check-in the PEs first compare their identities
//     (compareIdentity), which sets the vote's width.
func (p *PE) acknowledge(raise bool, code uint8) (uint8, error) {
	const op = "interrupt acknowledge"
	p.change = change{}
	// Every PE takes part in the acknowledge at the same point of the
	// program, but a PE that left, or joins now, has not made the others'
	// calls meanwhile: the census count starts again here on every PE.
	p.calls = 0
	code, err := p.readCode(op, raise, code)
	if err != nil {
		return 0, err
	}
	if err := p.barrier(op); err != nil {
		return code, err
	}
	if p.checking {
		if err := p.compareIdentity(); err != nil {
			return code, err
		}
	}
	mask, err := p.stays(op, code)
	return code, p.takeVote(mask, err)
}

// readCode is the acknowledge's steps 1 to 3: it returns the code the
// NAND lines give once every PE has acknowledged, and takes the phase of
// the last completed barrier.
func (p *PE) readCode(op string, raise bool, code uint8) (uint8, error) {
	nybble, ctrl := uint8(lpt.DataMask), uint8(lpt.SEL)
	if raise {
		nybble, ctrl = ^code&lpt.DataMask, lpt.SEL|lpt.IRQ
	}
	p.last = p.last&ledBits | nybble
	p.port.WriteData(p.last)
	p.port.WriteControl(ctrl)
	// P_SEL rises slowly (see interruptPending): until it has, Busy may
	// still show the ready flag, and a ready flag of 0 would read as the
	// interrupt flag already cleared.
	for range confirmReads {
		p.port.ReadStatus()
	}
	if err := p.ackWait(op); err != nil {
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
	return s >> lpt.InputShift & lpt.DataMask, nil
}

// ackWait is the acknowledge's step 2, the wait for every port's P_NAK.
// In check-in, once a vote has counted PEs (ackBound), that vote's own
// acknowledge saw every port's P_NAK low: a port at power-on, parked or
// transparent keeps it low, so only a PE that has started since can hold
// it high, and a live one lets go within the operation timeout. Beyond
// it that PE is dead or stopped, and waiting out CheckInTimeout (minutes,
// for PCs started by hand) would only delay the error. The barrier that
// follows is not bounded so: a port not yet started holds it rightly.
func (p *PE) ackWait(op string) error {
	if p.ackBound == 0 || p.ackBound >= p.timeout {
		return p.slowWait(op, true)
	}
	t := p.timeout
	p.timeout = p.ackBound
	err := p.slowWait(op, true)
	p.timeout = t
	_, p.ackHeld = errors.AsType[*TimeoutError](err)
	return err
}

// stays is the acknowledge's step 5: the vote of the PEs that take part
// from now on.
func (p *PE) stays(op string, code uint8) (peset.Set, error) {
	mask, err := p.vote(op, !p.depart)
	if code == ReturnCode && err == nil {
		// A return: every PE votes again, the complement, so that a data
		// line stuck at 0 (it reads as a vote to stay) is not taken for a
		// PE that went on: a PE counts as staying only if its second
		// vote says so too. Finish then proves the run, which names the
		// line.
		var gone peset.Set
		gone, err = p.vote(op, p.depart)
		mask &^= gone
	}
	return mask, err
}

// takeVote acts on the vote of who stays (mask, and the vote's error): a
// departing PE goes transparent, the others take the new participants.
func (p *PE) takeVote(mask peset.Set, err error) error {
	if p.finishing && err == nil {
		// When every participant votes to end here, Finish proves the
		// run before it goes transparent (proof.go).
		if p.stayed = mask & p.members; p.stayed == 0 {
			return nil
		}
	}
	if p.depart {
		p.goTransparent() // voted absent, now is: whatever the vote's fate
		if p.finishing {
			return err // without its vote Finish cannot prove the run
		}
		return nil
	}
	if err != nil {
		return err
	}
	p.change = change{left: p.members &^ mask, joined: mask &^ p.members}
	p.members = mask
	return nil
}

// goTransparent takes this PE out of every barrier and NAND: data 0xcf
// (both strobes and every data line high, LED dark), as the seed's
// partition; and control 0, because the interrupt acknowledge barrier
// clears the flag only when every PE has P_NAK low, so a departed PE must
// acknowledge forever. Two registers, hence two port writes.
func (p *PE) goTransparent() {
	p.port.WriteData(lpt.Transparent)
	p.port.WriteControl(0)
	p.state = left
}

// Leave takes this PE out of the group, announced: it raises a parallel
// interrupt (code 0), takes part in the acknowledge, votes itself absent in
// the vote that ends it and goes transparent (0xcf, the seed's partition).
// Every other PE's current or next operation returns an *InterruptError
// whose Left names this PE, and every PE's Participants drops it at the
// same point of the program; the others' collectives then combine the
// participants only.
//
// The seed's partition is the bare 0xcf write. It cannot be the whole of
// Leave here: the port needs a second write (control: P_NAK low, so this PE
// does not block the others' interrupt acknowledge — a different register),
// and a transparent PE is invisible on the board — the others would combine
// without it and never know, and a Broadcast from it would read as zero.
// The interrupt is the one event every PE sees at the same point of its
// program.
//
// If the others do not all acknowledge within the timeout, Leave returns
// the error and leaves the port stalling every barrier (both strobes low,
// acknowledging), so that they stop when they come, rather than go on
// without knowing. Either way the PE has left: Rejoin, or Close.
func (p *PE) Leave() error { return p.leave("Leave", 0) }

// Abort ends this PE's part in the program because it cannot go on: it
// announces its departure like Leave, with code, so that every other PE's
// current or next operation returns an *InterruptError that carries code
// and names this PE in Left. spmd.Fail uses it.
func (p *PE) Abort(code uint8) error { return p.leave("Abort", code) }

// Abandon does what Abort does for a program that can no longer use its
// *PE — a signal handler while another goroutine owns it — on the raw port,
// which the caller must have taken from that goroutine (no write of the old
// owner may follow). It bounds its waits by timeout (0: DefaultTimeout) and
// returns whether the others acknowledged.
func Abandon(port lpt.Port, code uint8, timeout time.Duration) error {
	p := &PE{port: port, self: -1, timeout: cmp.Or(timeout, DefaultTimeout), last: lpt.LR}
	return p.leave("Abandon", code)
}

// ReturnCode is the interrupt code of a PE whose program returned
// (Finish): the others' InterruptError then names it in Returned.
const ReturnCode = 0xe

// Finish ends this PE's part in a program that returned, and closes it.
// A PE whose program returns while the others still compute must not
// look like one that died: Finish announces the departure like Leave,
// with ReturnCode, so that every other PE's current or next operation
// returns an *InterruptError whose Returned names this PE (within a
// barrier's time, not after a timeout). At a normal end every PE finishes
// together, and the one acknowledge of all their announcements is their
// last barrier; each then leaves its port transparent, as the next run's
// check-in expects. If the others do not acknowledge within the timeout
// (they compute longer than that after their last collective) it goes
// transparent anyway and returns nil: the departure stays announced by
// the latched interrupt, so a PE that finishes later is not held up, and
// one that computes on is told at its next interrupt check or census
// (docs/protocol.md, "Leaving, closing, failing"). On an engine, or after
// Leave, it is Close.
func (p *PE) Finish() error {
	var err error
	if p.eng == nil && p.state == running {
		p.depart, p.finishing, p.stayed = true, true, 0
		p.serving = p.datanet != nil
		p.port.WriteControl(lpt.NAK | lpt.IRQ)
		code, aerr := p.acknowledge(true, ReturnCode)
		p.depart, p.finishing = false, false
		err = p.ended(code, p.stayed, aerr)
		p.serving = false
		if p.state != left {
			p.goTransparent()
		}
	}
	return errors.Join(err, p.Close())
}

func (p *PE) leave(op string, code uint8) error {
	if code > lpt.DataMask {
		return p.errorf("%s: %w: code %#x is wider than 4 bits (use 0 to 0xf)", op, ErrArgument, code)
	}
	if err := p.usable(op); err != nil {
		return err
	}
	if p.eng != nil {
		_, err := p.engineRaise(op, code, true)
		p.state = left
		return err
	}
	p.depart = true
	defer func() { p.depart = false }()
	p.port.WriteControl(lpt.NAK | lpt.IRQ)
	_, err := p.acknowledge(true, code)
	if p.state == left {
		// Departed — in this acknowledge or in one nested in its barrier.
		return nil
	}
	// Stall every barrier and acknowledge forever: the others stop when
	// they come, and can still acknowledge the interrupt. The LED is red,
	// as for every PE that holds the others up.
	p.last = p.last&^(lpt.Strobes|ledBits) | lpt.LR
	p.port.WriteData(p.last)
	p.port.WriteControl(0)
	p.state = left
	return err
}

// Rejoin brings a PE that left back into the group. The others cannot wait
// for a transparent PE, and the strobe phase alone cannot tell where they
// are in a multi-barrier operation, so Rejoin raises a parallel interrupt
// carrying code: the others acknowledge it in their next barrier (which the
// rejoining PE stalls until they do) and their operation returns an
// *InterruptError with the code whose Joined names this PE — the program's
// cue that the group has changed. Every PE is in step afterwards, and
// Participants includes this PE again. Rejoin returns the delivered code.
func (p *PE) Rejoin(code uint8) (uint8, error) {
	if p.state != left {
		return 0, p.errorf("Rejoin: %w: this PE has not left (Leave)", ErrArgument)
	}
	if code > lpt.DataMask {
		return 0, p.errorf("Rejoin: %w: code %#x is wider than 4 bits (use 0 to 0xf)", ErrArgument, code)
	}
	if p.eng != nil {
		p.state = running
		return p.engineRaise("Rejoin", code, false)
	}
	p.last = p.last&ledBits | lpt.DataMask // both strobes low: hold every barrier
	p.port.WriteData(p.last)
	p.state = running
	return p.Interrupt(code)
}

// engineRaise raises an interrupt on an engine and adopts the participants
// its acknowledge agreed on.
func (p *PE) engineRaise(op string, code uint8, depart bool) (uint8, error) {
	delivered, members, err := p.eng.Raise(op, code, depart)
	if err != nil {
		return 0, p.fromEngine(err)
	}
	p.adopt(members)
	return delivered, nil
}
