package papers_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// stuckMidRun runs two sums of 4 PEs' Self()+1 and ends (Finish): between
// the sums fault strikes the board, every PE waiting until it has. It
// returns each PE's second sum, the error that ended its sums (nil if
// both ran) and what its end said.
func stuckMidRun(t *testing.T, cfg papers.Config, fault emu.Fault) (sums [4]int32, errs, end [4]error) {
	t.Helper()
	const n = 4
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	struck := make(chan struct{})
	err = emulate.RunOn(b, n, cfg, func(p *papers.PE) error {
		k := p.Self()
		if _, errs[k] = papers.Reduce(p, papers.Sum, int32(k+1)); errs[k] != nil {
			return nil
		}
		if k == 0 {
			if err := b.Inject(fault); err != nil {
				return err
			}
			close(struck)
		}
		<-struck
		if sums[k], errs[k] = papers.Reduce(p, papers.Sum, int32(k+1)); errs[k] != nil {
			if fault.Kind == emu.Unplugged && k == fault.PE {
				return p.Close() // cut off: it cannot end with the others
			}
			return nil
		}
		if fault.Kind == emu.Unplugged && k == fault.PE {
			return p.Close()
		}
		end[k] = p.Finish()
		return nil
	})
	t.Logf("the run: %v", err) // its ends: a PE that stopped at its sums ends there
	return sums, errs, end
}

// TestEndFindsStuckLine: a data line that sticks at 0 after check-in
// makes a sum wrong without an error; the end of the run tests the lines
// and every PE fails naming the line and the calls whose results may be
// wrong (issue: 40 PEs of 40 printed sum=65538 and exited 0).
func TestEndFindsStuckLine(t *testing.T) {
	fault, err := emu.ParseFault("PE1.D3=stuck0")
	if err != nil {
		t.Fatal(err)
	}
	sums, errs, end := stuckMidRun(t, papers.Config{}, fault)
	for k := range 4 {
		if errs[k] != nil {
			t.Fatalf("PE %d: the sums failed (%v): this test needs the fault silent until the end", k, errs[k])
		}
		if sums[k] == 10 {
			t.Errorf("PE %d: the sum with D3 stuck is right (10): the fault does not test the end", k)
		}
		var le *papers.LineError
		if !errors.As(end[k], &le) || le.Line.Pin != 5 || le.Stuck != 0 || le.Since != 0 || le.Calls != 2 {
			t.Errorf("PE %d: the end of the run: %v; want a LineError naming pin 5 stuck at 0, results 1 to 2 suspect", k, end[k])
		}
	}
	t.Logf("PE 0: sum %d, then %v", sums[0], end[0])
}

// TestVerifyNamesStuckLineAtCall: with Config.Verify the first call after
// the line sticks fails, on every PE, before it returns its result, and
// names itself as the call whose result may be wrong.
func TestVerifyNamesStuckLineAtCall(t *testing.T) {
	fault, err := emu.ParseFault("PE2.D1=stuck1")
	if err != nil {
		t.Fatal(err)
	}
	_, errs, _ := stuckMidRun(t, papers.Config{Verify: true}, fault)
	for k := range 4 {
		var le *papers.LineError
		if !errors.As(errs[k], &le) || le.Faulty != 2 || le.Op != "Reduce" || le.Since != 1 || le.Calls != 2 {
			t.Errorf("PE %d: the second sum: %v; want a LineError naming PE 2's line at that Reduce, call 2 suspect", k, errs[k])
		}
	}
}

// TestEndFindsUnpluggedAfterVotes: a cable pulled during local
// computation, then a sum by votes (no gather, fewer calls than
// CensusEvery: no census runs): the end of the run names the PE (issue:
// 15 survivors of 15 exited 0 with sum=4).
func TestEndFindsUnpluggedAfterVotes(t *testing.T) {
	const n, victim = 4, 3
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	var end [n]error
	var counts [n]int
	pulled := make(chan struct{})
	err = emulate.RunOn(b, n, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) error {
		k := p.Self()
		if err := p.Barrier(); err != nil {
			return err
		}
		if k == victim {
			if err := b.Inject(emu.Fault{PE: victim, Kind: emu.Unplugged}); err != nil {
				return err
			}
			close(pulled)
			return p.Close()
		}
		<-pulled
		mask, err := p.Vote(true)
		if err != nil {
			return err
		}
		for ; mask != 0; mask &= mask - 1 {
			counts[k]++
		}
		end[k] = p.Finish()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range n - 1 {
		if counts[k] != n-1 {
			t.Fatalf("PE %d: the vote counted %d, want %d (no census: the end must find it)", k, counts[k], n-1)
		}
		var ae *papers.AbsentError
		if !errors.As(end[k], &ae) || ae.Missing != 1<<victim || ae.Proven != 0 || ae.Calls != 2 {
			t.Errorf("PE %d: the end of the run: %v; want an *AbsentError naming PE %d, results 1 to 2 suspect", k, end[k], victim)
		}
	}
}
