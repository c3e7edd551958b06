package strata

import "fmt"

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
		return fmt.Errorf("strata: PE %d: unknown segment boundary %d (use NoBoundary, ElementBoundary or ArrayBoundary)", s.self, uint8(g))
	}
	s.seg = g
	return nil
}

// CurrentSegment returns this PE's segment boundary (Strata's
// CurrentSegment).
func (s *S) CurrentSegment() Segment { return s.seg }

// combineState is a split-phase combine in progress: the operation, the
// vector length, and where the result goes.
type combineState struct {
	op    CombineOp
	m     int // words per PE
	width int // nybbles per PE: 8 per word, plus one for the segment in scans
	to    []int32
	one   [1]int32 // CombineInt's value, so it needs no slice of its own
}

// The combine is a gather: PE 0 sends its words (and, for a scan, its
// segment) one nybble per NAND while the others are silent, then PE 1, and
// so on; every PE then computes its own result from the same gathered
// words, in PE order. n PEs and m words take n*(8m+1) NANDs.
func (s *S) startCombine(to, from []int32, op CombineOp, pend pending, name string) error {
	if err := s.check(name); err != nil {
		return err
	}
	if err := op.valid(); err != nil {
		return err
	}
	if len(to) != len(from) {
		return fmt.Errorf("strata: PE %d: %s: to has %d elements and from %d: they must be the same length", s.self, name, len(to), len(from))
	}
	s.logOp(LogCombine, name)
	c := &s.cv
	c.op, c.m, c.to = op, len(from), to
	c.width = 8 * c.m
	if op.IsScan() {
		c.width++
	}
	s.sq.reset(s.n * c.width)
	base := s.self * c.width
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

// finishCombine computes this PE's results from the gathered words.
func (s *S) finishCombine() {
	c := &s.cv
	op := c.op
	for e := 0; e < c.m; e++ {
		word := func(pe int) uint32 { return uint32(s.sq.getNybbles(pe*c.width+8*e, 8)) }
		seg := func(pe int) Segment { return Segment(s.sq.getNybbles(pe*c.width+8*c.m, 1)) }
		acc := op.identity()
		if op.direction() == 2 { // reduction: every PE, segments ignored
			for pe := 0; pe < s.n; pe++ {
				acc = op.apply(acc, word(pe))
			}
			c.to[e] = int32(acc)
			continue
		}
		// A scan runs from the first PE in its direction up to this one. The
		// boundary before PE pe is pe's own segment flag going forward, and
		// the flag of pe+1 (the PE met just before) going backward.
		first, step := 0, 1
		boundary := seg
		if op.direction() == 1 {
			first, step = s.n-1, -1
			boundary = func(pe int) Segment {
				if pe+1 < s.n {
					return seg(pe + 1)
				}
				return NoBoundary
			}
		}
		for pe := first; ; pe += step {
			g := boundary(pe)
			if g == ElementBoundary {
				acc = op.identity()
			}
			if pe == s.self {
				break
			}
			if g == ArrayBoundary {
				acc = op.identity()
			}
			acc = op.apply(acc, word(pe))
		}
		c.to[e] = int32(acc)
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

// QueryCombineInt polls the combine without blocking: true once it has
// completed (Strata's QueryCombineInt).
func (s *S) QueryCombineInt() (bool, error) {
	if err := s.expect(pendCombine, "QueryCombineInt"); err != nil {
		return false, err
	}
	return s.advance("CombineInt", false)
}

// CompleteCombineInt waits for the combine and returns its result
// (Strata's CompleteCombineInt).
func (s *S) CompleteCombineInt() (int32, error) {
	if err := s.expect(pendCombine, "CompleteCombineInt"); err != nil {
		return 0, err
	}
	if err := s.completeCombine("CombineInt"); err != nil {
		return 0, err
	}
	return s.cv.one[0], nil
}

func (s *S) completeCombine(name string) error {
	old := s.enter(StateCombine, 0, "")
	defer s.leave(old)
	s.pend = pendNone
	if _, err := s.completeSeq(name); err != nil {
		return err
	}
	s.finishCombine()
	return nil
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

// QueryCombineVector polls without blocking: true once the vector combine
// has completed. (Strata 2.0 has none; it is the same poll as
// QueryCombineInt.)
func (s *S) QueryCombineVector() (bool, error) {
	if err := s.expect(pendCombineVector, "QueryCombineVector"); err != nil {
		return false, err
	}
	return s.advance("CombineVector", false)
}

// CompleteCombineVector waits for the vector combine (Strata's
// CompleteCombineVector).
func (s *S) CompleteCombineVector() error {
	if err := s.expect(pendCombineVector, "CompleteCombineVector"); err != nil {
		return err
	}
	return s.completeCombine("CombineVector")
}
