package strata

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// CombineOp is one of Strata's fifteen combine operations: five functions
// (signed add, or, xor, unsigned add, signed max) by three directions
// (forward scan, backward scan, reduction).
type CombineOp uint8

// The fifteen CombineOps. Scans are exclusive: PE i gets the combination of
// the values of PEs 0..i-1 (ScanX) or i+1..n-1 (BackScanX), and the first
// PE of a segment the identity. Signed and unsigned add give the same bits
// (two's complement); they differ only in how the caller reads the result.
const (
	ScanAdd CombineOp = iota
	ScanOr
	ScanXor
	ScanUadd
	ScanMax
	BackScanAdd
	BackScanOr
	BackScanXor
	BackScanUadd
	BackScanMax
	ReduceAdd
	ReduceOr
	ReduceXor
	ReduceUadd
	ReduceMax
	numCombineOps
)

var combineNames = [...]string{
	"ScanAdd", "ScanOr", "ScanXor", "ScanUadd", "ScanMax",
	"BackScanAdd", "BackScanOr", "BackScanXor", "BackScanUadd", "BackScanMax",
	"ReduceAdd", "ReduceOr", "ReduceXor", "ReduceUadd", "ReduceMax",
}

func (op CombineOp) String() string {
	if op < numCombineOps {
		return combineNames[op]
	}
	return fmt.Sprintf("CombineOp(%d)", uint8(op))
}

// fn is the op's function: 0 add, 1 or, 2 xor, 3 uadd, 4 max.
func (op CombineOp) fn() int { return int(op % 5) }

// direction: 0 forward scan, 1 backward scan, 2 reduction.
func (op CombineOp) direction() int { return int(op / 5) }

// IsScan reports whether op is a forward or backward scan (which use the
// segments), not a reduction (which ignores them).
func (op CombineOp) IsScan() bool { return op < ReduceAdd }

func (op CombineOp) valid() error {
	if op >= numCombineOps {
		return fmt.Errorf("strata: unknown CombineOp %d (use ScanAdd ... ReduceMax)", uint8(op))
	}
	return nil
}

// identity and apply define the five functions on 32-bit words.
func (op CombineOp) identity() uint32 {
	if op.fn() == 4 {
		return 1 << 31 // math.MinInt32
	}
	return 0
}

func (op CombineOp) apply(a, b uint32) uint32 {
	switch op.fn() {
	case 1:
		return a | b
	case 2:
		return a ^ b
	case 4:
		return uint32(max(int32(a), int32(b)))
	}
	return a + b
}

// Segment is a PE's segment boundary for scans (Strata's SegmentType).
type Segment uint8

const (
	// NoBoundary: this PE continues the segment of the PE before it.
	NoBoundary Segment = iota
	// ElementBoundary: a segment starts here; this PE receives the identity.
	ElementBoundary
	// ArrayBoundary: a segment starts here, but this PE still receives the
	// previous segment's value, which it does not pass on ("give me the
	// value from the previous processor, but don't forward it").
	ArrayBoundary
)

func (g Segment) String() string {
	switch g {
	case NoBoundary:
		return "NoBoundary"
	case ElementBoundary:
		return "ElementBoundary"
	case ArrayBoundary:
		return "ArrayBoundary"
	}
	return fmt.Sprintf("Segment(%d)", uint8(g))
}

// SetSegment sets this PE's segment boundary for later scans (Strata's
// SetSegment). Initially every PE has NoBoundary: one segment. A scan uses
// the boundaries as they are when it starts; reductions ignore them.
//
// Backward scans use the same boundaries mirrored: a boundary at PE i ends
// the backward segment that runs down to i, so with ElementBoundary PE i-1
// receives the identity and with ArrayBoundary it receives the value of
// PEs i..n-1's segment without passing it on.
func (s *S) SetSegment(g Segment) error {
	if g > ArrayBoundary {
		return papers.Errorf("strata", s.self, "unknown segment boundary %d (use NoBoundary, ElementBoundary or ArrayBoundary)", uint8(g))
	}
	s.seg = g
	return nil
}

// CurrentSegment returns this PE's segment boundary (Strata's
// CurrentSegment).
func (s *S) CurrentSegment() Segment { return s.seg }

// combineState is a split-phase combine in progress: the operation, the
// vector length, the participants, and where the result goes.
type combineState struct {
	op      CombineOp
	m       int       // words per PE
	width   int       // nybbles per PE: 8 per word, plus one for the segment in scans
	members peset.Set // the PEs that take part (papers.PE.Participants)
	count   int       // how many
	to      []int32
	one     [1]int32 // CombineInt's value, so it needs no slice of its own
}

// The combine is a gather: the first participant sends its words (and,
// for a scan, its segment) one nybble per NAND while the others are
// silent, then the next, and so on; every PE then computes its own result
// from the same gathered words, in PE order. n participants and m words
// take n*(8m+1) NANDs. Departed PEs take no turn: their values and segment
// boundaries are simply not there.
func (s *S) startCombine(to, from []int32, op CombineOp, pend pending, name string) error {
	if err := s.check(name); err != nil {
		return err
	}
	if err := op.valid(); err != nil {
		return err
	}
	if len(to) != len(from) {
		return papers.Errorf("strata", s.self, "%s: to has %d elements and from %d: they must be the same length", name, len(to), len(from))
	}
	s.logOp(LogCombine, name)
	c := &s.cv
	c.op, c.m, c.to = op, len(from), to
	c.members = s.pe.Participants()
	c.count = c.members.Len()
	c.width = 8 * c.m
	if op.IsScan() {
		c.width++
	}
	s.sq.reset(c.count * c.width)
	base := c.rank(s.self) * c.width
	for i, v := range from {
		s.sq.putNybbles(base+8*i, uint64(uint32(v)), 8)
	}
	if op.IsScan() {
		s.sq.send[base+8*c.m] = uint8(s.seg)
	}
	if err := s.startSeq(name); err != nil {
		return err
	}
	s.pend = pend
	return nil
}

// rank is PE pe's turn among the participants.
func (c *combineState) rank(pe int) int { return (c.members & (1<<pe - 1)).Len() }

// finishCombine computes this PE's results from the gathered words: turn r
// is the r-th participant's.
func (s *S) finishCombine() {
	c := &s.cv
	for e := 0; e < c.m; e++ {
		word := func(r int) uint32 { return uint32(s.sq.getNybbles(r*c.width+8*e, 8)) }
		seg := func(r int) Segment { return Segment(s.sq.getNybbles(r*c.width+8*c.m, 1)) }
		if c.op.direction() == 2 { // reduction: every participant, segments ignored
			acc := c.op.identity()
			for r := range c.count {
				acc = c.op.apply(acc, word(r))
			}
			c.to[e] = int32(acc)
			continue
		}
		c.to[e] = int32(c.scan(c.rank(s.self), word, seg))
	}
}

// scan is the segmented scan's result at turn me. A scan runs from the
// first turn in its direction up to me. The boundary before turn r is r's
// own segment going forward, and that of r+1 (the turn met just before)
// going backward.
func (c *combineState) scan(me int, word func(int) uint32, seg func(int) Segment) uint32 {
	first, step := 0, 1
	boundary := seg
	if c.op.direction() == 1 {
		first, step = c.count-1, -1
		boundary = func(r int) Segment {
			if r+1 < c.count {
				return seg(r + 1)
			}
			return NoBoundary
		}
	}
	acc := c.op.identity()
	for r := first; ; r += step {
		g := boundary(r)
		if g == ElementBoundary {
			acc = c.op.identity()
		}
		if r == me {
			return acc
		}
		if g == ArrayBoundary {
			acc = c.op.identity()
		}
		acc = c.op.apply(acc, word(r))
	}
}

// CombineInt combines every PE's value with op and returns this PE's
// result (Strata's CombineInt). Scans use the current segments.
func (s *S) CombineInt(value int32, op CombineOp) (int32, error) {
	if err := s.StartCombineInt(value, op); err != nil {
		return 0, err
	}
	return s.CompleteCombineInt()
}

// StartCombineInt starts a split-phase CombineInt and returns at once
// (Strata's StartCombineInt).
func (s *S) StartCombineInt(value int32, op CombineOp) error {
	s.cv.one[0] = value
	return s.startCombine(s.cv.one[:], s.cv.one[:], op, pendCombine, "CombineInt")
}

// QueryCombineInt polls the combine without blocking: true once the last
// combine has completed, and from then on (Strata's QueryCombineInt).
func (s *S) QueryCombineInt() (bool, error) {
	return s.split(pendCombine, "QueryCombineInt", false)
}

// CompleteCombineInt returns the result of the last combine, waiting for it
// if need be (Strata's CompleteCombineInt).
func (s *S) CompleteCombineInt() (int32, error) {
	if err := s.completeCombine(pendCombine, "CompleteCombineInt"); err != nil {
		return 0, err
	}
	return s.cv.one[0], nil
}

func (s *S) completeCombine(k pending, op string) error {
	old := s.enter(StateCombine, 0, "")
	defer s.leave(old)
	_, err := s.split(k, op, true)
	return err
}

// CombineVector combines element by element: to[i] is the combination of
// every PE's from[i] (Strata's CombineVector; to may be from). Every PE
// must pass vectors of the same length.
func (s *S) CombineVector(to, from []int32, op CombineOp) error {
	if err := s.StartCombineVector(to, from, op); err != nil {
		return err
	}
	return s.CompleteCombineVector()
}

// StartCombineVector starts a split-phase CombineVector (Strata's
// StartCombineVector). from is read before it returns; to is written by
// QueryCombineVector or CompleteCombineVector.
func (s *S) StartCombineVector(to, from []int32, op CombineOp) error {
	return s.startCombine(to, from, op, pendCombineVector, "CombineVector")
}

// QueryCombineVector polls without blocking: true once the last vector
// combine has completed (its results are then in to), and from then on.
// (Strata 2.0 has none; it is the same poll as QueryCombineInt.)
func (s *S) QueryCombineVector() (bool, error) {
	return s.split(pendCombineVector, "QueryCombineVector", false)
}

// CompleteCombineVector returns once the last vector combine has completed
// (Strata's CompleteCombineVector).
func (s *S) CompleteCombineVector() error {
	return s.completeCombine(pendCombineVector, "CompleteCombineVector")
}
