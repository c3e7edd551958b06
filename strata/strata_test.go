package strata

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/papers"
)

// run runs a Strata program of n PEs on an emulated board.
func run(n int, fn func(*S) error) error { return emulate.Run(n, papers.Config{}, Program(fn)) }

// Split-phase operations really are split: while PE 1 is late, the others
// keep computing between Start and Complete, polling with Query. The late
// PE starts each phase only once the others have seen it incomplete.
func TestSplitPhaseOverlap(t *testing.T) {
	const n, late = 4, 1
	polls := make([][3]int, n)
	queried := make(chan struct{}, n)
	// phase runs one split-phase operation: the late PE waits for every
	// other PE's first (false) Query, the others count their polls.
	phase := func(s *S, i int, start func() error, query func() (bool, error)) error {
		if s.Self() == late {
			for range n - 1 {
				<-queried
			}
		}
		if err := start(); err != nil {
			return err
		}
		for first := true; ; first = false {
			done, err := query()
			if err != nil {
				return err
			}
			if first && s.Self() != late {
				queried <- struct{}{}
			}
			if done {
				return nil
			}
			polls[s.Self()][i]++
		}
	}
	err := run(n, func(s *S) error {
		if err := phase(s, 0, s.StartBarrier, s.QueryBarrier); err != nil {
			return err
		}
		// global OR: only the late PE says true
		if err := phase(s, 1, func() error { return s.StartGlobalOR(s.Self() == late) }, s.QueryGlobalOR); err != nil {
			return err
		}
		if or, err := s.CompleteGlobalOR(); err != nil || !or {
			return fmt.Errorf("GlobalOR: got %v, %v; want true", or, err)
		}
		if err := phase(s, 2, func() error { return s.StartCombineInt(int32(s.Self()+1), ReduceAdd) }, s.QueryCombineInt); err != nil {
			return err
		}
		if sum, err := s.CompleteCombineInt(); err != nil || sum != 10 {
			return fmt.Errorf("split-phase ReduceAdd = %d, %v; want 10", sum, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pe := range n {
		if pe != late && (polls[pe][0] == 0 || polls[pe][1] == 0 || polls[pe][2] == 0) {
			t.Errorf("PE %d computed %v times between Start and completion while PE %d was late; want > 0", pe, polls[pe], late)
		}
	}
}

func TestSplitPhaseMisuse(t *testing.T) {
	err := run(2, func(s *S) error {
		if _, err := s.CompleteCombineInt(); err == nil || !strings.Contains(err.Error(), "without a split-phase combine: call StartCombineInt first") {
			return fmt.Errorf("CompleteCombineInt without Start: %v", err)
		}
		if _, err := s.QueryGlobalOR(); err == nil || !strings.Contains(err.Error(), "call StartGlobalOR first") {
			return fmt.Errorf("QueryGlobalOR without Start: %v", err)
		}
		if err := s.StartCombineVector(make([]int32, 2), make([]int32, 3), ReduceAdd); err == nil {
			return errors.New("CombineVector with mismatched lengths: no error")
		}
		if _, err := s.CombineInt(1, CombineOp(99)); err == nil {
			return errors.New("CombineOp 99: no error")
		}
		// While a combine is in progress, other operations say so.
		if err := s.StartCombineInt(1, ReduceAdd); err != nil {
			return err
		}
		if _, err := s.QueryBarrier(); err == nil || !strings.Contains(err.Error(), "while a split-phase combine is in progress") {
			return fmt.Errorf("QueryBarrier during a split-phase combine: %v", err)
		}
		if _, err := s.CombineInt(1, ReduceAdd); err == nil {
			return errors.New("CombineInt during a split-phase combine: no error")
		}
		if sum, err := s.CompleteCombineInt(); err != nil || sum != 2 {
			return fmt.Errorf("CompleteCombineInt = %d, %v; want 2", sum, err)
		}
		return s.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestBroadcast(t *testing.T) {
	const n, root = 5, 2
	err := run(n, func(s *S) error {
		vec := []Word{1, 0xdeadbeef, 3}
		if s.Self() == root {
			if err := s.Broadcast(0xcafef00d); err != nil {
				return err
			}
			for {
				done, err := s.QueryBroadcast()
				if err != nil {
					return err
				}
				if done {
					break
				}
			}
			if err := s.BroadcastDouble(-math.Pi); err != nil {
				return err
			}
			// the pending BroadcastDouble completes inside this call
			to := make([]Word, len(vec))
			if err := s.BroadcastVector(to, vec); err != nil {
				return err
			}
			if fmt.Sprint(to) != fmt.Sprint(vec) {
				return fmt.Errorf("broadcaster's to = %v", to)
			}
		} else {
			w, err := s.ReceiveBroadcast()
			if err != nil || w != 0xcafef00d {
				return fmt.Errorf("ReceiveBroadcast = %#x, %v", w, err)
			}
			d, err := s.ReceiveBroadcastDouble()
			if err != nil || d != -math.Pi {
				return fmt.Errorf("ReceiveBroadcastDouble = %v, %v", d, err)
			}
			to := make([]Word, len(vec))
			if err := s.ReceiveBroadcastVector(to); err != nil || fmt.Sprint(to) != fmt.Sprint(vec) {
				return fmt.Errorf("ReceiveBroadcastVector = %v, %v", to, err)
			}
		}
		// two broadcasters: every PE gets the error, and stays in step
		if s.Self() < 2 {
			s.Broadcast(1)
			if ok, err := s.QueryBroadcast(); err == nil {
				for !ok && err == nil {
					ok, err = s.QueryBroadcast()
				}
				if err == nil {
					return errors.New("two broadcasters: no error on a broadcaster")
				}
			}
		} else if _, err := s.ReceiveBroadcast(); err == nil || !strings.Contains(err.Error(), "PEs 0, 1 broadcast at once") {
			return fmt.Errorf("two broadcasters: receiver got %v", err)
		}
		return s.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAsyncGlobalOR(t *testing.T) {
	const n = 4
	err := run(n, func(s *S) error {
		if v, err := s.GetAsyncGlobalOR(); err != nil || !v {
			return fmt.Errorf("initial async OR = %v, %v; want true (Init sets every bit)", v, err)
		}
		if err := s.Barrier(); err != nil { // everybody has read it
			return err
		}
		s.SetAsyncGlobalOR(false)
		if err := s.Barrier(); err != nil {
			return err
		}
		if v, _ := s.GetAsyncGlobalOR(); v {
			r, _ := s.pe.SenseNAND()
			return fmt.Errorf("async OR true after every PE set false (NAND %#x, data %#x)", r, s.pe.Port().ReadData())
		}
		// Everybody must have read before anyone starts a NAND-based
		// operation: those drive the line too (the documented limit).
		if err := s.Barrier(); err != nil {
			return err
		}
		// a combine in between must leave the lines as they were
		if _, err := s.CombineInt(int32(s.Self()), ReduceOr); err != nil {
			return err
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		if v, _ := s.GetAsyncGlobalOR(); v {
			r, _ := s.pe.SenseNAND()
			return fmt.Errorf("async OR true after a combine (NAND %#x, async %v)", r, s.async)
		}
		if err := s.Barrier(); err != nil { // everybody has read it
			return err
		}
		// PE 3 raises its bit while the others spin without any barrier
		if s.Self() == 3 {
			s.SetAsyncGlobalOR(true)
		} else {
			deadline := time.Now().Add(5 * time.Second)
			for {
				v, err := s.GetAsyncGlobalOR()
				if err != nil {
					return err
				}
				if v {
					break
				}
				if time.Now().After(deadline) {
					return errors.New("never saw PE 3's asynchronous OR")
				}
			}
		}
		return s.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestComposite(t *testing.T) {
	ints := []int32{7, -3, 12, 4}        // even count: median is the smaller middle, 4
	uints := []uint32{9, 1, 100, 2}      // median 2
	floats := []float32{1.5, -2, 8, 0.5} // median 0.5
	type res struct {
		i [5]int32
		u [5]uint32
		f [5]float32
	}
	got := collect(t, 4, func(s *S) (r res, err error) {
		for op := Min; op <= Median; op++ {
			if r.i[op], err = s.CompositeInt(ints[s.Self()], op); err != nil {
				return
			}
			if r.u[op], err = s.CompositeUint(uints[s.Self()], op); err != nil {
				return
			}
			if r.f[op], err = s.CompositeFloat(floats[s.Self()], op); err != nil {
				return
			}
		}
		return
	})
	// sample variances, over n-1 = 3
	v := func(squares float64) float32 { return float32(squares / 3) }
	wantI := [5]int32{-3, 12, 5, int32(v(4 + 64 + 49 + 1)), 4}
	wantU := [5]uint32{1, 100, 28, uint32(v(19*19 + 27*27 + 72*72 + 26*26)), 2}
	wantF := [5]float32{-2, 8, 2, v(0.5*0.5 + 4*4 + 6*6 + 1.5*1.5), 0.5}
	for pe, r := range got {
		if r.i != wantI || r.u != wantU || r.f != wantF {
			t.Errorf("PE %d: int %v uint %v float %v; want %v %v %v", pe, r.i, r.u, r.f, wantI, wantU, wantF)
		}
	}
}

// A PE that fails brings every other PE down through the parallel
// interrupt, whether it waits in a barrier or is still computing, and the
// others' errors name it.
func TestFailStopsEveryPE(t *testing.T) {
	const n, bad = 4, 2
	errs := make([]error, n)
	var stderr testenv.Buffer
	failing := make(chan struct{})
	run(n, func(s *S) (ret error) {
		// whichever operation meets the interrupt, record its error
		defer func() { errs[s.Self()] = ret }()
		s.SetOutput(io.Discard, &stderr)
		// every PE past Init, so each meets the interrupt in this code
		if err := s.Barrier(); err != nil {
			return err
		}
		var err error
		switch s.Self() {
		case bad:
			close(failing)
			err = s.Fail("disk %d is on fire", 7)
		case 3:
			<-failing // computing when the failure comes
			_, err = s.CombineInt(1, ReduceAdd)
		default:
			err = s.Barrier()
		}
		if err == nil {
			err = errors.New("no error")
		}
		if err2 := s.Barrier(); err2 == nil || (s.Self() != bad && !errors.Is(err2, err)) {
			err = fmt.Errorf("operation after the abort: %v (first: %v)", err2, err)
		}
		return err
	})
	for pe, err := range errs {
		if pe == bad {
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != -1 || !strings.Contains(ee.Msg, "disk 7 is on fire") {
				t.Errorf("failing PE: %v, want an *ExitError with code -1 and the message", err)
			}
			continue
		}
		var ab *AbortError
		if !errors.As(err, &ab) || ab.Code != 0xf || !strings.Contains(err.Error(), "PE 2 exited with code 0xf") {
			t.Errorf("PE %d: %v, want an *AbortError with code 0xf naming PE 2", pe, err)
		}
	}
	if !strings.Contains(stderr.String(), "strata: PE 2: FAIL: disk 7 is on fire") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

// Exit(0) waits in a barrier for every PE: no PE leaves it before the last
// one has arrived.
func TestExitZeroWaitsForAll(t *testing.T) {
	const n, last = 3, 2
	var arrived atomic.Bool
	entering := make(chan struct{}, n)
	err := run(n, func(s *S) error {
		if s.Self() == last {
			for range n - 1 { // the others are on their way into Exit
				<-entering
			}
			arrived.Store(true)
		} else {
			entering <- struct{}{}
		}
		err := s.Exit(0)
		if !arrived.Load() {
			return fmt.Errorf("PE %d left Exit(0) before PE %d arrived", s.Self(), last)
		}
		if s.Barrier() != ErrExited {
			return errors.New("operation after Exit did not return ErrExited")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAssert(t *testing.T) {
	errs := make([]error, 2)
	run(2, func(s *S) (err error) {
		// whichever operation meets the interrupt, record its error
		defer func() { errs[s.Self()] = err }()
		s.SetOutput(nil, io.Discard)
		if err := s.Assert(true, "fine"); err != nil {
			return err
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		if s.Self() == 0 {
			return s.Assert(1+1 == 3, "arithmetic")
		}
		return s.Barrier()
	})
	if err := errs[0]; err == nil || !strings.Contains(err.Error(), "assertion failed at") || !strings.Contains(err.Error(), "strata_test.go") || !strings.Contains(err.Error(), "arithmetic") {
		t.Errorf("Assert: %v", err)
	}
	var ab *AbortError
	if !errors.As(errs[1], &ab) {
		t.Errorf("other PE: %v, want *AbortError", errs[1])
	}
}

func TestStrataLogAndLogging(t *testing.T) {
	var log testenv.Buffer
	err := run(2, func(s *S) error {
		s.SetOutput(nil, &log)
		s.SetLogging(LogBarrier | LogCombine)
		s.StrataLog("hello %s", "there")
		if err := s.Barrier(); err != nil {
			return err
		}
		_, err := s.CombineInt(1, ReduceAdd)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := log.String()
	for _, want := range []string{"[PE 0] hello there\n", "[PE 1] hello there\n", "[PE 1] Barrier", "[PE 0] CombineInt"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestPartition(t *testing.T) {
	got := collect(t, 5, func(s *S) ([4]int, error) {
		return [4]int{s.Self(), s.PartitionSize(), s.LogPartitionSize(), s.PartitionMask()}, nil
	})
	for pe, g := range got {
		if g != [4]int{pe, 5, 3, 7} {
			t.Errorf("PE %d: Self, PartitionSize, LogPartitionSize, PartitionMask = %v", pe, g)
		}
	}
}
