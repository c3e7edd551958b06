package strata

import "github.com/ttlpapers/ttlpapers/lpt"

// pending names the split-phase operation in progress.
type pending uint8

const (
	pendNone pending = iota
	pendBarrier
	pendGlobalOR
	pendCombine
	pendCombineVector
	pendBroadcast
	numPending
)

func (p pending) String() string {
	return [...]string{"none", "barrier", "global OR", "combine", "vector combine", "broadcast"}[p]
}

// op is the operation's name, as in StartX.
func (p pending) op() string {
	return [...]string{"", "Barrier", "GlobalOR", "CombineInt", "CombineVector", "Broadcast"}[p]
}

// seq runs a sequence of NANDs whose contributions are all known when it
// starts, split-phase: each NAND is the seed's "data first" form (set the
// data lines, flip the strobes, wait, read the NAND, then a second barrier
// so that nobody changes data before every PE has read), and every wait is
// a papers split-phase barrier, so the sequence advances only as far as
// the board lets it without blocking when polled.
//
// All of Strata's combines and broadcasts are such sequences: a PE sends a
// nybble by driving it while every other PE drives 0xf, and the NAND is its
// complement.
type seq struct {
	send, recv []uint8 // this PE's contribution and the NAND, per step
	k          int     // the step in progress
	phase      uint8   // 1: waiting for the data barrier, 2: for the release barrier
}

// reset sizes the sequence for n steps, every PE driving 0xf (silent).
func (q *seq) reset(n int) {
	if cap(q.send) < n {
		q.send = make([]uint8, n)
		q.recv = make([]uint8, n)
	}
	q.send, q.recv = q.send[:n], q.recv[:n]
	for i := range q.send {
		q.send[i] = lpt.DataMask
	}
	q.k, q.phase = 0, 0
}

// startSeq issues the first NAND of s.sq.
func (s *S) startSeq(op string) error {
	if len(s.sq.send) == 0 {
		return nil
	}
	return s.issue(op)
}

func (s *S) issue(op string) error {
	if err := s.pe.SetData(s.sq.send[s.sq.k]); err != nil {
		return s.fail(op, err)
	}
	if err := s.pe.StartBarrier(); err != nil {
		return s.fail(op, err)
	}
	s.sq.phase = 1
	return nil
}

// advance moves the sequence on as far as it can; with block false it
// polls each barrier once and returns false at the first one that has not
// completed. When the sequence ends it restores the asynchronous global OR.
func (s *S) advance(op string, block bool) (bool, error) {
	q := &s.sq
	for q.k < len(q.send) {
		if block {
			if err := s.pe.CompleteBarrier(); err != nil {
				return false, s.fail(op, err)
			}
		} else {
			ok, err := s.pe.QueryBarrier()
			if err != nil {
				return false, s.fail(op, err)
			}
			if !ok {
				return false, nil
			}
		}
		if q.phase == 1 {
			// The resample: the ready line can beat the data lines.
			r, err := s.pe.SenseNAND()
			if err != nil {
				return false, s.fail(op, err)
			}
			q.recv[q.k] = r
			if err := s.pe.StartBarrier(); err != nil {
				return false, s.fail(op, err)
			}
			q.phase = 2
			continue
		}
		q.k++
		s.nands++
		if q.k < len(q.send) {
			if err := s.issue(op); err != nil {
				return false, err
			}
		}
	}
	q.phase = 0
	return true, s.restoreAsync(op)
}

// completeSeq waits for the rest of the sequence.
func (s *S) completeSeq(op string) (bool, error) { return s.advance(op, true) }

// runSeq runs the whole sequence and waits for it.
func (s *S) runSeq(op string) error {
	if err := s.startSeq(op); err != nil {
		return err
	}
	_, err := s.completeSeq(op)
	return err
}

// putNybbles writes the 4-bit nybbles of v, low first, as this PE's
// contribution to steps from, from+1, ...
func (q *seq) putNybbles(from int, v uint64, count int) {
	for j := 0; j < count; j++ {
		q.send[from+j] = uint8(v>>(4*j)) & lpt.DataMask
	}
}

// getNybbles reassembles a value sent with putNybbles by one PE while the
// others were silent: each NAND is the complement of the sender's nybble.
func (q *seq) getNybbles(from int, count int) uint64 {
	var v uint64
	for j := 0; j < count; j++ {
		v |= uint64(^q.recv[from+j]&lpt.DataMask) << (4 * j)
	}
	return v
}
