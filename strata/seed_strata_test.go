package strata

// The Strata 2.0 manual (Brewer and Blumofe, MIT, February 1994;
// docs/seeds.md) as tests: its worked example, its call sequences and every
// result its definitions state, each row quoting the manual. Where this port
// differs, the row says so.

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// §4.3.1: "Assume that there are 16 processors (0 on the left), the
// operation is ScanAdd, and that segment boundaries are marked as N, E, or
// A" — both rows of the manual's table.
func TestSeedSegmentedScan(t *testing.T) {
	for _, c := range []struct {
		seed string
		g    Segment
		want []int32
	}{
		{`"Case 1: ... Segment: E N N N E N N N E N N N E N N N  Output: 0 1 2 3 0 2 4 6 0 3 6 9 0 4 8 12" — "the first node in a segment receives the identity value"`,
			ElementBoundary, []int32{0, 1, 2, 3, 0, 2, 4, 6, 0, 3, 6, 9, 0, 4, 8, 12}},
		{`"Case 2: ... Segment: A N N N A N N N A N N N A N N N  Output: 0 1 2 3 4 2 4 6 8 3 6 9 12 4 8 12" — "the first node of a segment receives the value of the previous segment"`,
			ArrayBoundary, []int32{0, 1, 2, 3, 4, 2, 4, 6, 8, 3, 6, 9, 12, 4, 8, 12}},
	} {
		got := collect(t, 16, func(s *S) (int32, error) {
			if s.Self()%4 == 0 {
				s.SetSegment(c.g)
			}
			return s.CombineInt(int32(s.Self()/4+1), ScanAdd) // "Value: 1 1 1 1 2 2 2 2 3 3 3 3 4 4 4 4"
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("%s\n\tgot %v", c.seed, got)
		}
	}
}

// §4.3.1's other statements about segments.
func TestSeedSegments(t *testing.T) {
	type res struct {
		reduce, started int32
		initial         Segment
	}
	got := collect(t, 4, func(s *S) (r res, err error) {
		// "Initially, the partition is set up as one large segment covering
		// all nodes." "It is fine for only a subset of the nodes to call
		// SetSegment."
		r.initial = s.CurrentSegment()
		if s.Self() == 2 {
			s.SetSegment(ElementBoundary)
		}
		// "Note that reduction operations ignore the segments"
		if r.reduce, err = s.CombineInt(1, ReduceAdd); err != nil {
			return
		}
		// "segments are determined at the time the scan starts (on this
		// node); changing the segments after that has no effect."
		if err = s.StartCombineInt(1, ScanAdd); err != nil {
			return
		}
		s.SetSegment(NoBoundary)
		r.started, err = s.CompleteCombineInt()
		return
	})
	for pe, r := range got {
		want := res{4, []int32{0, 1, 0, 1}[pe], NoBoundary}
		if r != want {
			t.Errorf("PE %d: %+v, want %+v", pe, r, want)
		}
	}
}

// §4.3: "there are fifteen primitive combine operations ... Together these
// fifteen variants form the enumerated type CombineOp".
func TestSeedCombineOps(t *testing.T) {
	want := []string{"ScanAdd", "ScanOr", "ScanXor", "ScanUadd", "ScanMax",
		"BackScanAdd", "BackScanOr", "BackScanXor", "BackScanUadd", "BackScanMax",
		"ReduceAdd", "ReduceOr", "ReduceXor", "ReduceUadd", "ReduceMax"}
	for op := CombineOp(0); op < numCombineOps; op++ {
		if op.String() != want[op] {
			t.Errorf("CombineOp %d is %v, the manual's %s", op, op, want[op])
		}
	}
	if numCombineOps != 15 {
		t.Errorf("%d CombineOps, the manual has 15", numCombineOps)
	}
	// "The Scan variants perform a forward scan (by processor number), the
	// BackScan variants perform a backward scan, and the Reduce variants
	// perform a reduction." Values 3, 1, 2 (signed max, unsigned add...).
	got := collect(t, 3, func(s *S) (r [5]int32, err error) {
		v := []int32{3, 1, 2}[s.Self()]
		for i, op := range []CombineOp{ScanMax, BackScanMax, ReduceMax, ReduceXor, CombineOp(ScanUadd)} {
			if r[i], err = s.CombineInt(v, op); err != nil {
				return
			}
		}
		return
	})
	want3 := [][5]int32{{-1 << 31, 2, 3, 0, 0}, {3, 2, 3, 0, 3}, {3, -1 << 31, 3, 0, 4}}
	for pe := range got {
		if got[pe] != want3[pe] {
			t.Errorf("PE %d: ScanMax, BackScanMax, ReduceMax, ReduceXor, ScanUadd = %v, want %v", pe, got[pe], want3[pe])
		}
	}
}

// §4.1 and §4.2: the barrier, the global OR and their split-phase forms,
// run as the manual's call sequences.
func TestSeedBarrierAndGlobalOR(t *testing.T) {
	const n = 4
	var arrived atomic.Int32
	err := run(n, func(s *S) error {
		// "void Barrier(void) Returns when all nodes reach the barrier. It
		// is equivalent to GlobalOR(False)."
		arrived.Add(1)
		or, err := s.GlobalOR(false)
		if err != nil || or || arrived.Load() != n {
			return fmt.Errorf("GlobalOR(False) = %v, %v, having seen %d of %d PEs arrive", or, err, arrived.Load(), n)
		}
		// "Bool GlobalOR(Bool not_done) Returns the OR of the not_done
		// argument of each PE."
		if or, err := s.GlobalOR(s.Self() == 2); err != nil || !or {
			return fmt.Errorf("GlobalOR with PE 2 not done = %v, %v", or, err)
		}
		// "QueryBarrier: Returns true if and only if the last barrier has
		// completed." "CompleteBarrier: Returns when the last barrier has
		// completed, possibly blocking."
		if err := s.StartBarrier(); err != nil {
			return err
		}
		if err := pollUntil(s.QueryBarrier); err != nil {
			return err
		}
		if ok, err := s.QueryBarrier(); !ok || err != nil {
			return fmt.Errorf("QueryBarrier once the barrier has completed = %v, %v; want true", ok, err)
		}
		if err := s.CompleteBarrier(); err != nil {
			return fmt.Errorf("CompleteBarrier once QueryBarrier saw the barrier complete: %v", err)
		}
		// "QueryGlobalOR: Returns true if and only if the last global OR
		// has completed." "CompleteGlobalOR: Returns the result of the last
		// global OR; blocks until the result is available."
		if err := s.StartGlobalOR(s.Self() == 0); err != nil {
			return err
		}
		if err := pollUntil(s.QueryGlobalOR); err != nil {
			return err
		}
		if err := s.Barrier(); err != nil { // another operation in between
			return err
		}
		for range 2 {
			if ok, err := s.QueryGlobalOR(); !ok || err != nil {
				return fmt.Errorf("QueryGlobalOR after completion = %v, %v", ok, err)
			}
			if or, err := s.CompleteGlobalOR(); !or || err != nil {
				return fmt.Errorf("CompleteGlobalOR = %v, %v; want true (PE 0 not done)", or, err)
			}
		}
		// "During StrataInit, each node's value is set to True."
		if v, err := s.GetAsyncGlobalOR(); !v || err != nil {
			return fmt.Errorf("GetAsyncGlobalOR after Init = %v, %v; want true", v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pollUntil calls query until it reports true.
func pollUntil(query func() (bool, error)) error {
	for {
		ok, err := query()
		if ok || err != nil {
			return err
		}
	}
}

// §4.3.2: the combine procedures' sequences.
func TestSeedCombineSequences(t *testing.T) {
	err := run(3, func(s *S) error {
		v := int32(s.Self() + 1)
		// "StartCombineInt: Starts a split-phase combine operation."
		// "QueryCombineInt: Returns true if and only if the last combine
		// operation has completed." "CompleteCombineInt: Returns the result
		// of the pending split-phase combine operation, possibly blocking."
		if err := s.StartCombineInt(v, ReduceAdd); err != nil {
			return err
		}
		if err := pollUntil(s.QueryCombineInt); err != nil {
			return err
		}
		if ok, err := s.QueryCombineInt(); !ok || err != nil {
			return fmt.Errorf("QueryCombineInt after completion = %v, %v", ok, err)
		}
		if sum, err := s.CompleteCombineInt(); sum != 6 || err != nil {
			return fmt.Errorf("CompleteCombineInt = %d, %v; want 6", sum, err)
		}
		// "CombineVector: ... The input vector is from and the result is
		// placed into to, which may be the same as from."
		vec := []int32{v, -v}
		if err := s.CombineVector(vec, vec, ReduceAdd); err != nil || vec[0] != 6 || vec[1] != -6 {
			return fmt.Errorf("CombineVector in place = %v, %v; want [6 -6]", vec, err)
		}
		// "StartCombineVector ... CompleteCombineVector: Blocks until the
		// pending split-phase vector combine operation completes. There is
		// currently no QueryCombineVector." (Ours has one.)
		to := make([]int32, 1)
		if err := s.StartCombineVector(to, []int32{v}, ScanAdd); err != nil {
			return err
		}
		if err := s.CompleteCombineVector(); err != nil || to[0] != []int32{0, 1, 3}[s.Self()] {
			return fmt.Errorf("split-phase vector ScanAdd = %v, %v", to, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// §5: the composite reductions' definitions.
func TestSeedComposite(t *testing.T) {
	rows := []struct {
		seed   string
		values []int32
		op     CompositeOp
		want   int32
	}{
		{`"Median computes the median of the values contributed by the nodes. If there are an even number of values, then it returns the smaller of the two middle values."`, []int32{7, -3, 12, 4}, Median, 4},
		{`(odd count: the middle value)`, []int32{5, 1, 3}, Median, 3},
		{`"Min, Max, and Average are straightforward reductions." (Min)`, []int32{7, -3, 12, 4}, Min, -3},
		{`(Max)`, []int32{7, -3, 12, 4}, Max, 12},
		{`"The Average operation has the same overflow properties as a ReduceAdd of the same values." (20/4)`, []int32{7, -3, 12, 4}, Average, 5},
		{`"Variance computes the sample variance of the values": sum of squared deviations over n-1 = 118/3`, []int32{7, -3, 12, 4}, Variance, 39},
		{`"If the partition size is one, the reduction returns zero."`, []int32{9}, Variance, 0},
		{`"The latter form is the one actually used." Our difference: two passes (mean, then deviations), since Σx² − (Σx)²/n cancels to 0 here even in float64; 5/3 truncates to 1`, []int32{2e9, 2e9 + 1, 2e9 + 2, 2e9 + 3}, Variance, 1},
	}
	for _, r := range rows {
		got := collect(t, len(r.values), func(s *S) (int32, error) { return s.CompositeInt(r.values[s.Self()], r.op) })
		for pe, g := range got {
			if g != r.want {
				t.Errorf("%s\n\tPE %d: %v of %v = %d, want %d", r.seed, pe, r.op, r.values, g, r.want)
			}
		}
	}
	f := collect(t, 4, func(s *S) (float32, error) { return s.CompositeFloat([]float32{1.5, -2, 8, 0.5}[s.Self()], Variance) })
	if want := float32((0.5*0.5 + 4*4 + 6*6 + 1.5*1.5) / 3); f[0] != want {
		t.Errorf("CompositeFloat Variance = %v, want %v", f[0], want)
	}
}

// §3.2, §3.6, §9: globals and debugging definitions.
func TestSeedBasics(t *testing.T) {
	// "char *StrataVersion String: version number and date" and "float
	// StrataVersionNumber The version number"
	if !strings.Contains(Version, "2.0") || !strings.Contains(Version, "1994") || VersionNumber != 2.0 {
		t.Errorf("Version %q, VersionNumber %v: want the version number and date, 2.0", Version, VersionNumber)
	}
	// "Bool StrataLogging True iff linked with the debugging library." —
	// every build has the debugging library's logging here.
	if !Logging {
		t.Error("Logging is false, but SetLogging and StrataLog are always there")
	}
	// "int PartitionSize Current partition size", "int logPartitionSize The
	// log (base two) of the partition size", "int PartitionMask Mask for
	// legal node bits", "LEFTMOST Defined as (Self==0)".
	got := collect(t, 4, func(s *S) ([5]any, error) {
		return [5]any{s.PartitionSize(), s.LogPartitionSize(), s.PartitionMask(), s.Leftmost(), s.Rightmost()}, nil
	})
	if fmt.Sprint(got[0]) != "[4 2 3 true false]" || fmt.Sprint(got[3]) != "[4 2 3 false true]" {
		t.Errorf("PE 0 and PE 3: PartitionSize, logPartitionSize, PartitionMask, LEFTMOST, RIGHTMOST = %v, %v", got[0], got[3])
	}
	// "Returns a pseudo-random 32-bit value. This is the "minimal standard"
	// random-number generator described by Park and Miller" (their check:
	// seed 1, the 10000th value is 1043618065; TestRandomParkMiller) "The
	// default seed is Self+1".
	s := &S{self: 2, rng: 3}
	if v := s.Random(); v != 3*16807 {
		t.Errorf("first value from the default seed Self+1 = 3: %d, want %d", v, 3*16807)
	}
	// "Qprintf ... The return value is the number of characters in the
	// message." "EmptyPrintQ ... The return value is the number of messages
	// that had been queued up."
	var out testenv.Buffer
	q := fakeS(&out)
	if n := q.Qprintf("node %d of %d\n", 1, 4); n != len("node 1 of 4\n") {
		t.Errorf("Qprintf returned %d, want the message's length %d", n, len("node 1 of 4\n"))
	}
	q.Qprintf("again\n")
	if n := q.EmptyPrintQ(); n != 2 || out.String() != "node 1 of 4\nagain\n" {
		t.Errorf("EmptyPrintQ = %d, wrote %q; want 2 messages", n, out.String())
	}
	// "ATOMIC INLINE double CyclesToSeconds(unsigned cycles) Converts a
	// time in cycles into seconds (not microseconds)."
	if s := CyclesToSeconds(CyclesPerSecond); s != 1 {
		t.Errorf("CyclesToSeconds(one second of cycles) = %v", s)
	}
	// §10: "State 0 always means "idle" and state 1 always means "busy"";
	// "In debugging mode, Strata uses states 2 through 7 as follows:
	// Logging, Qprintf, EmptyPrintQ, Broadcasting, Combine Operation,
	// Barrier"; "there can be at most 16 states".
	states := []int{StateIdle, StateBusy, StateLogging, StateQprintf, StateEmptyPrintQ, StateBroadcast, StateCombine, StateBarrier}
	if !slices.Equal(states, []int{0, 1, 2, 3, 4, 5, 6, 7}) || MaxStates != 16 {
		t.Errorf("states %v, at most %d; want 0-7 in the manual's order, 16", states, MaxStates)
	}
}
