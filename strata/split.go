package strata

import "fmt"

// Strata's split-phase operations (manual §4): Start… begins one and
// returns; Query… "returns true if and only if the last … has completed";
// Complete… returns (the result of) the last one, "possibly blocking". At
// most one is in progress (s.pend); once it completes — seen by Query or
// waited for by Complete — its result is kept, Query stays true and
// Complete returns at once, while other operations may run, until the next
// Start of the same kind.

// split runs Query (block false) or Complete (block true) of kind k: it
// advances the operation of that kind in progress, and reports true once
// the last one has completed (now or before).
func (s *S) split(k pending, op string, block bool) (bool, error) {
	if s.done {
		return false, ErrExited
	}
	if s.err != nil {
		return false, s.err
	}
	if s.pend == pendBroadcast && k != pendBroadcast {
		if err := s.finishBroadcast(op); err != nil {
			return false, err
		}
	}
	switch {
	case s.pend == k:
	case s.pend != pendNone:
		return false, &misuseError{s.self, op, k, s.pend}
	case s.had[k] || k == pendBarrier: // Barrier and the check-in were barriers too
		return true, nil
	default:
		return false, &misuseError{s.self, op, k, pendNone}
	}
	done, err := s.step(k, block)
	if err != nil || !done {
		return false, err
	}
	s.pend = pendNone
	s.had[k] = true
	switch k {
	case pendGlobalOR:
		s.orResult = s.sq.recv[0]&1 != 0
	case pendCombine, pendCombineVector:
		s.finishCombine()
	}
	return true, nil
}

// step advances the operation of kind k in progress: polls once, or waits.
func (s *S) step(k pending, block bool) (bool, error) {
	name := k.op()
	if k != pendBarrier {
		return s.advance(name, block)
	}
	var ok bool
	var err error
	if block {
		ok, err = true, s.pe.CompleteBarrier()
	} else {
		ok, err = s.pe.QueryBarrier()
	}
	if err != nil {
		return false, s.fail(name, err)
	}
	return ok, nil
}

type misuseError struct {
	pe       int
	op       string
	want, is pending
}

func (e *misuseError) Error() string {
	if e.is == pendNone {
		return fmt.Sprintf("strata: PE %d: %s without a split-phase %s: call Start%s first", e.pe, e.op, e.want, e.want.op())
	}
	return fmt.Sprintf("strata: PE %d: %s while a split-phase %s is in progress: complete that first", e.pe, e.op, e.is)
}
