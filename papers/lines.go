package papers

import (
	"github.com/ttlpapers/ttlpapers/lpt"
)

// SetData drives x on this PE's four data lines at once, without a barrier
// (one port write, none when the lines already carry x). The board's NAND
// gates are combinational, so every PE sees the new NAND on its next status
// read. Call it only between operations: a PE that changes its data while
// another PE is inside a NAND corrupts that NAND. Together with StartBarrier
// and SenseNAND it builds a split-phase NAND (the seed's "data first"
// order), and it lets a program park a value on a line between operations.
func (p *PE) SetData(x uint8) error {
	if x > lpt.DataMask {
		return p.errorf("SetData: %w: data %#x is wider than 4 bits: the board has 4 data lines (use 0 to 0xf)", ErrArgument, x)
	}
	if err := p.usable("SetData"); err != nil {
		return err
	}
	if p.eng != nil {
		p.last = p.last&^lpt.DataMask | x
		return nil
	}
	if p.last&lpt.DataMask != x {
		p.last = p.last&^lpt.DataMask | x
		p.port.WriteData(p.last)
	}
	if err := p.port.Err(); err != nil {
		return p.errorf("SetData: port failed: %w", err)
	}
	return nil
}

// SenseNAND reads the NAND of every PE's data lines as they are now (one
// port read, no barrier). The value is meaningful when no PE is changing
// its data: right after a barrier every PE entered with its data set, or
// while every PE holds its lines steady between operations. It may be
// called during a split-phase barrier.
func (p *PE) SenseNAND() (uint8, error) {
	if p.state == closed {
		return 0, p.errorf("SenseNAND: %w", ErrClosed)
	}
	if p.eng != nil {
		if !p.sensed {
			return 0, p.errorf("SenseNAND: %w", ErrNoLines)
		}
		return p.sensedNAND, nil
	}
	r := p.port.ReadStatus() >> lpt.InputShift & lpt.DataMask
	if err := p.port.Err(); err != nil {
		return 0, p.errorf("SenseNAND: port failed: %w", err)
	}
	return r, nil
}
