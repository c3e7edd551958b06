package strata

import (
	"math"
	"math/bits"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// A broadcast is a NAND sequence that every PE runs: first a vote (one NAND
// per four PEs) in which the broadcaster names itself, so that receivers
// need not know who sends and zero or two broadcasters are an error on
// every PE; then the broadcaster's nybbles while the receivers are silent.
type broadcastState struct {
	words int // data nybbles after the header
}

// header is the number of vote steps that open a broadcast.
func (s *S) header() int { return (s.n + 3) / 4 }

// startBroadcast lays out a broadcast of count nybbles of v (sent when
// send is true) and starts it.
func (s *S) startBroadcast(send bool, v uint64, count int, op string) error {
	h := s.header()
	s.sq.reset(h + count)
	if send {
		s.sq.send[s.self/4] = lpt.DataMask &^ (1 << (s.self % 4))
		s.sq.putNybbles(h, v, count)
	}
	s.bc.words = count
	return s.startSeq(op)
}

// broadcaster decodes the vote at the head of a broadcast.
func (s *S) broadcaster(op string) (int, error) {
	var mask uint64
	for r := 0; r < s.header(); r++ {
		mask |= uint64(s.sq.recv[r]) << (4 * r) // a NAND bit is high where a PE drove its line low
	}
	mask &= 1<<s.n - 1
	switch bits.OnesCount64(mask) {
	case 1:
		return bits.TrailingZeros64(mask), nil
	case 0:
		return -1, papers.Errorf("strata", s.self, "%s: no PE broadcast (every PE called a Receive function): exactly one PE must call the Broadcast function", op)
	}
	return -1, papers.Errorf("strata", s.self, "%s: %s broadcast at once: exactly one PE may call the Broadcast function, the others the Receive function", op, peset.Set(mask))
}

// receive runs a whole broadcast of count nybbles as a receiver.
func (s *S) receive(count int, op string) (uint64, error) {
	if err := s.check(op); err != nil {
		return 0, err
	}
	old := s.enter(StateBroadcast, LogBroadcast, op)
	defer s.leave(old)
	if err := s.startBroadcast(false, 0, count, op); err != nil {
		return 0, err
	}
	if _, err := s.completeSeq(op); err != nil {
		return 0, err
	}
	if _, err := s.broadcaster(op); err != nil {
		return 0, err
	}
	return s.sq.getNybbles(s.header(), count), nil
}

// send starts a broadcast of count nybbles of v and returns at once.
func (s *S) send(v uint64, count int, op string) error {
	if err := s.check(op); err != nil {
		return err
	}
	s.logOp(LogBroadcast, op)
	if err := s.startBroadcast(true, v, count, op); err != nil {
		return err
	}
	s.pend = pendBroadcast
	return nil
}

// Broadcast sends value to every other PE, which must call
// ReceiveBroadcast (Strata's Broadcast). It returns once the broadcast is
// started; it completes while this PE polls QueryBroadcast or at the start
// of its next operation. 8 NANDs plus one per four PEs.
func (s *S) Broadcast(value Word) error { return s.send(uint64(value), 8, "Broadcast") }

// ReceiveBroadcast returns the word another PE broadcast (Strata's
// ReceiveBroadcast).
func (s *S) ReceiveBroadcast() (Word, error) {
	v, err := s.receive(8, "ReceiveBroadcast")
	return Word(v), err
}

// BroadcastDouble sends a float64 to every other PE, which must call
// ReceiveBroadcastDouble (Strata's BroadcastDouble); it returns at once,
// like Broadcast.
func (s *S) BroadcastDouble(value float64) error {
	return s.send(math.Float64bits(value), 16, "BroadcastDouble")
}

// ReceiveBroadcastDouble returns the float64 another PE broadcast (Strata's
// ReceiveBroadcastDouble).
func (s *S) ReceiveBroadcastDouble() (float64, error) {
	v, err := s.receive(16, "ReceiveBroadcastDouble")
	return math.Float64frombits(v), err
}

// QueryBroadcast polls this PE's pending Broadcast or BroadcastDouble once
// without blocking: true when it has completed, or when none is pending
// (Strata's QueryBroadcast).
func (s *S) QueryBroadcast() (bool, error) {
	if s.pend != pendBroadcast {
		return s.err == nil, s.err
	}
	done, err := s.advance("Broadcast", false)
	if done && err == nil {
		s.pend = pendNone
		_, err = s.broadcaster("Broadcast")
	}
	return done, err
}

// finishBroadcast waits for this PE's pending broadcast to complete.
func (s *S) finishBroadcast(op string) error {
	s.pend = pendNone
	if _, err := s.completeSeq(op); err != nil {
		return err
	}
	_, err := s.broadcaster("Broadcast")
	return err
}

// BroadcastVector sends from to every other PE, which must call
// ReceiveBroadcastVector, and copies it to to (Strata's BroadcastVector).
// The length travels first (8 NANDs), so a receiver whose vector has
// another length gets an error instead of a garbled vector; then 8 NANDs
// per word.
func (s *S) BroadcastVector(to, from []Word) error {
	if len(to) != len(from) {
		return papers.Errorf("strata", s.self, "BroadcastVector: to has %d words and from %d: they must be the same length", len(to), len(from))
	}
	return s.vector(true, to, from, "BroadcastVector")
}

// ReceiveBroadcastVector receives the vector another PE sent with
// BroadcastVector into to, which must have the same length (Strata's
// ReceiveBroadcastVector).
func (s *S) ReceiveBroadcastVector(to []Word) error {
	return s.vector(false, to, nil, "ReceiveBroadcastVector")
}

func (s *S) vector(send bool, to, from []Word, op string) error {
	if err := s.check(op); err != nil {
		return err
	}
	old := s.enter(StateBroadcast, LogBroadcast, op)
	defer s.leave(old)
	if err := s.startBroadcast(send, uint64(len(from)), 8, op); err != nil {
		return err
	}
	if _, err := s.completeSeq(op); err != nil {
		return err
	}
	if _, err := s.broadcaster(op); err != nil {
		return err
	}
	m := int(s.sq.getNybbles(s.header(), 8))
	s.sq.reset(8 * m)
	if send {
		for i, w := range from {
			s.sq.putNybbles(8*i, uint64(w), 8)
		}
	}
	if err := s.runSeq(op); err != nil {
		return err
	}
	for i := 0; i < m && i < len(to); i++ {
		to[i] = Word(s.sq.getNybbles(8*i, 8))
	}
	if len(to) != m {
		return papers.Errorf("strata", s.self, "%s: the broadcast vector has %d words but this PE's has %d: every PE must pass the same length", op, m, len(to))
	}
	return nil
}
