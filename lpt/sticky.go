package lpt

import "sync/atomic"

// StickyError keeps the first error a port meets, for ports whose register
// operations cannot return one: each backend sets it where an operation
// fails and returns it from Port.Err. The zero value holds no error. It is
// safe for concurrent use, and neither Err nor a Set after the first error
// allocates, so a failing port costs nothing on the operation path.
type StickyError struct {
	p atomic.Pointer[error]
}

// Set records err unless an error is already recorded; a nil err is ignored.
func (s *StickyError) Set(err error) {
	if err == nil || s.p.Load() != nil {
		return
	}
	e := err // a copy, so that only the kept error is moved to the heap, not every call's err
	s.p.CompareAndSwap(nil, &e)
}

// Err returns the first error Set recorded, or nil.
func (s *StickyError) Err() error {
	if e := s.p.Load(); e != nil {
		return *e
	}
	return nil
}
