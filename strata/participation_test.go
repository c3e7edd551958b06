package strata

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// runDeparted runs fn as a Strata program on the PEs of an n-PE board that
// stay after PE leaver has left (papers.PE.Leave, announced through the
// interrupt, which every other PE meets in a barrier first).
func runDeparted(n, leaver int, fn func(*S) error) error {
	return emulate.Run(n, papers.Config{Timeout: 10 * time.Second}, func(p *papers.PE) error {
		if p.Self() == leaver {
			return p.Leave()
		}
		for {
			err := p.Barrier()
			var ie *papers.InterruptError
			if errors.As(err, &ie) {
				break
			}
			if err != nil {
				return err
			}
		}
		return Program(fn)(p)
	})
}

// TestCombinesWithDepartedPE: every Strata combine, broadcast and composite
// reduction over the PEs that take part, after PE 2 of 5 has left. PE k
// contributes k+1: the participants' values are 1, 2, 4, 5.
func TestCombinesWithDepartedPE(t *testing.T) {
	const n, gone = 5, 2
	type want struct {
		scan, segScan, backScan int32
	}
	wants := map[int]want{0: {0, 0, 11}, 1: {1, 1, 9}, 3: {3, 0, 5}, 4: {7, 4, 0}}
	err := runDeparted(n, gone, func(s *S) error {
		v, w := int32(s.Self()+1), wants[s.Self()]
		check := func(what string, got, want any, err error) error {
			if err == nil && fmt.Sprint(got) != fmt.Sprint(want) {
				err = fmt.Errorf("%s = %v, want %v over PEs 0, 1, 3, 4", what, got, want)
			}
			return err
		}
		for _, c := range []struct {
			op   CombineOp
			want int32
		}{{ReduceAdd, 12}, {ReduceMax, 5}, {ReduceOr, 7}, {ScanAdd, w.scan}, {BackScanAdd, w.backScan}} {
			got, err := s.CombineInt(v, c.op)
			if err := check(c.op.String(), got, c.want, err); err != nil {
				return err
			}
		}
		if s.Self() == 3 {
			s.SetSegment(ElementBoundary)
		}
		got, err := s.CombineInt(v, ScanAdd)
		if err := check("ScanAdd with a boundary at PE 3", got, w.segScan, err); err != nil {
			return err
		}
		s.SetSegment(NoBoundary)
		vec := []int32{v, 10 * v}
		err = s.CombineVector(vec, vec, ReduceAdd)
		if err := check("CombineVector ReduceAdd", vec, []int32{12, 120}, err); err != nil {
			return err
		}
		or, err := s.GlobalOR(s.Self() == 4)
		if err := check("GlobalOR", or, true, err); err != nil {
			return err
		}
		if err := compositesOverParticipants(s, v, check); err != nil {
			return err
		}
		if s.Self() == 4 {
			return s.Broadcast(0xbeef)
		}
		word, err := s.ReceiveBroadcast()
		return check("ReceiveBroadcast", word, 0xbeef, err)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compositesOverParticipants checks the composite reductions of 1, 2, 4, 5.
func compositesOverParticipants(s *S, v int32, check func(string, any, any, error) error) error {
	for _, c := range []struct {
		op   CompositeOp
		want int32
	}{{Min, 1}, {Max, 5}, {Average, 3}, {Median, 2}, {Variance, 3}} {
		got, err := s.CompositeInt(v, c.op)
		if err := check("CompositeInt "+c.op.String(), got, c.want, err); err != nil {
			return err
		}
	}
	got, err := s.CompositeFloat(float32(v), Variance)
	return check("CompositeFloat Variance", got, float32(10.0/3), err)
}
