package strata

import (
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Barrier returns when every PE has reached a barrier (Strata's Barrier):
// one board barrier, two port operations when nobody is late.
func (s *S) Barrier() error {
	if err := s.check("Barrier"); err != nil {
		return err
	}
	old := s.enter(StateBarrier, LogBarrier, "Barrier")
	defer s.leave(old)
	if err := s.barrier(); err != nil {
		return s.fail("Barrier", err)
	}
	return nil
}

// StartBarrier signals arrival at a barrier and returns at once
// (Strata's StartBarrier); the PE may compute until QueryBarrier or
// CompleteBarrier.
func (s *S) StartBarrier() error {
	if err := s.check("StartBarrier"); err != nil {
		return err
	}
	s.logOp(LogBarrier, "StartBarrier")
	if err := s.pe.StartBarrier(); err != nil {
		return s.fail("StartBarrier", err)
	}
	s.pend = pendBarrier
	return nil
}

// QueryBarrier reports, without blocking, whether the last barrier has
// completed (Strata's QueryBarrier: "true if and only if the last barrier
// has completed"): it reads the board once while a barrier begun by
// StartBarrier is pending; once that barrier has completed it is true, and
// stays true — other operations may run meanwhile — until the next
// StartBarrier.
func (s *S) QueryBarrier() (bool, error) {
	return s.split(pendBarrier, "QueryBarrier", false)
}

// CompleteBarrier returns once the last barrier has completed (Strata's
// CompleteBarrier: "returns when the last barrier has completed, possibly
// blocking"): it waits for a barrier begun by StartBarrier, and returns at
// once when that barrier has completed already, whether or not QueryBarrier
// saw it.
func (s *S) CompleteBarrier() error {
	old := s.enter(StateBarrier, 0, "")
	defer s.leave(old)
	_, err := s.split(pendBarrier, "CompleteBarrier", true)
	return err
}

// GlobalOR returns the OR of every PE's notDone (Strata's GlobalOR): one
// NAND.
func (s *S) GlobalOR(notDone bool) (bool, error) {
	if err := s.StartGlobalOR(notDone); err != nil {
		return false, err
	}
	return s.CompleteGlobalOR()
}

// StartGlobalOR contributes notDone to a global OR and returns at once
// (Strata's StartGlobalOR).
func (s *S) StartGlobalOR(notDone bool) error {
	if err := s.check("StartGlobalOR"); err != nil {
		return err
	}
	s.sq.reset(1)
	if notDone {
		s.sq.send[0] = lpt.DataMask &^ 1 // line 0 low: the NAND's bit 0 goes high
	}
	if err := s.startSeq("GlobalOR"); err != nil {
		return err
	}
	s.pend = pendGlobalOR
	return nil
}

// QueryGlobalOR polls the global OR without blocking: true once the last
// global OR has completed, and from then on (Strata's QueryGlobalOR);
// CompleteGlobalOR then returns its result at once.
func (s *S) QueryGlobalOR() (bool, error) {
	return s.split(pendGlobalOR, "QueryGlobalOR", false)
}

// CompleteGlobalOR returns the result of the last global OR, waiting for it
// if need be (Strata's CompleteGlobalOR).
func (s *S) CompleteGlobalOR() (bool, error) {
	old := s.enter(StateCombine, LogCombine, "GlobalOR")
	defer s.leave(old)
	_, err := s.split(pendGlobalOR, "CompleteGlobalOR", true)
	return s.orResult && err == nil, err
}

// SetAsyncGlobalOR sets this PE's contribution to the asynchronous global
// OR (Strata's SetAsyncGlobalOR; Init sets it to true).
//
// On TTL_PAPERS the asynchronous OR lives on data line D3: between
// operations each PE drives D3 low while its bit is true, and the board's
// NAND gate for D3 — combinational, no barrier needed — outputs the OR of
// every PE's bit, which GetAsyncGlobalOR reads at any time (one port
// read). Setting it costs one port write. The limits: other operations
// use D3 too, so the value is meaningful only while no PE is inside a
// NAND-based operation; Strata restores the line at the end of each of its
// own operations, and a program that uses the papers PE directly must call
// RestoreAsyncGlobalOR afterwards. A PE that has exited (transparent port)
// counts as false.
func (s *S) SetAsyncGlobalOR(notDone bool) error {
	if s.done {
		return ErrExited
	}
	s.async = notDone
	if s.pend != pendNone {
		return nil // the line is restored when the operation ends
	}
	return s.restoreAsync("SetAsyncGlobalOR")
}

// RestoreAsyncGlobalOR puts this PE's asynchronous-global-OR bit back on
// its data line after the program used the papers PE directly.
func (s *S) RestoreAsyncGlobalOR() error {
	if s.done {
		return ErrExited
	}
	return s.restoreAsync("RestoreAsyncGlobalOR")
}

// GetAsyncGlobalOR reads the asynchronous global OR without a barrier:
// true when at least one PE's bit is true (Strata's GetAsyncGlobalOR).
func (s *S) GetAsyncGlobalOR() (bool, error) {
	if s.done {
		return false, ErrExited
	}
	r, err := s.pe.SenseNAND()
	if err != nil {
		return false, s.fail("GetAsyncGlobalOR", err)
	}
	return r&asyncLine != 0, nil
}

// restoreAsync parks the data lines at their resting value: all high but
// D3, which is low while this PE's asynchronous-OR bit is true.
func (s *S) restoreAsync(op string) error {
	x := uint8(lpt.DataMask)
	if s.async {
		x &^= asyncLine
	}
	if err := s.pe.SetData(x); err != nil {
		return s.fail(op, err)
	}
	return nil
}
