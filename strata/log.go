package strata

import (
	"fmt"
)

// LogFlags selects which operations Strata logs through StrataLog (the
// manual's LogBarrier, LogBroadcast, LogCombine and LogQprintf of its
// debugging library; all off by default, as there).
type LogFlags uint8

const (
	LogBarrier LogFlags = 1 << iota
	LogBroadcast
	LogCombine
	LogQprintf // each Qprintf's message, as it is queued
	// LogDataNet logs every active message sent and every poll that
	// handles some, and the block transfers (not in the manual, whose
	// debugging library logged the control network only).
	LogDataNet
)

// SetLogging chooses the operations to log; 0 (the default) logs none.
func (s *S) SetLogging(f LogFlags) { s.logging = f }

// StrataLog writes a printf-style line to this PE's stderr, prefixed with
// the PE number (Strata's StrataLog). It formats with fmt and writes the
// line with one Write, so lines from different PEs do not interleave on a
// shared writer; it is slow next to Qprintf, as the manual warns.
func (s *S) StrataLog(format string, args ...any) {
	old := s.enter(StateLogging, 0, "")
	defer s.leave(old)
	b := make([]byte, 0, 80)
	b = fmt.Appendf(b, "[PE %d] ", s.self)
	b = fmt.Appendf(b, format, args...)
	if len(b) == 0 || b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	s.stderr.Write(b)
}

// logOp logs an operation when its kind is being logged.
func (s *S) logOp(f LogFlags, op string) {
	if s.logging&f != 0 {
		s.StrataLog("%s (after %d barriers)", op, s.pe.Stats().Barriers)
	}
}

// enter records the start of an operation in the state graph (when
// recording) and logs it (when f is being logged); leave restores the
// previous state.
func (s *S) enter(state int, f LogFlags, op string) int {
	if f != 0 {
		s.logOp(f, op)
	}
	if !s.trace.on {
		return -1
	}
	return s.SetState(state)
}

func (s *S) leave(old int) {
	if old >= 0 && s.trace.on {
		s.SetState(old)
	}
}
