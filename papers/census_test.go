package papers_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// unplugMidRun runs sums of 4 PEs' Self()+1 on an emulated board whose PE
// 2 pulls its own cable after 20 of them, without announcing it, and waits
// there until the others are done. It returns each survivor's sums and the
// error that ended its loop (nil if it ran all rounds), and what its end
// of the run (Finish) said.
func unplugMidRun(t *testing.T, cfg papers.Config) (sums [4][]int32, errs, end [4]error) {
	t.Helper()
	const n, victim, before, rounds = 4, 2, 20, 60
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	var survivors sync.WaitGroup
	survivors.Add(n - 1)
	err = emulate.RunOn(b, n, cfg, func(p *papers.PE) error {
		k := p.Self()
		for i := range rounds {
			if k == victim && i == before {
				if err := b.Inject(emu.Fault{PE: victim, Kind: emu.Unplugged}); err != nil {
					return err
				}
				survivors.Wait() // a PC still running, its cable out
				return p.Close() // not Finish: cut off, it could not end with the others
			}
			s, err := papers.Reduce(p, papers.Sum, int32(k+1))
			if err != nil {
				errs[k] = err
				break
			}
			sums[k] = append(sums[k], s)
		}
		survivors.Done()
		end[k] = p.Finish() // the end of the run, which proves it
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums, errs, end
}

// TestCensusNamesUnpluggedPE: a PE whose cable is pulled mid-run reads as
// transparent, so without the census the others' sums silently lack it;
// with it, every survivor's next sum fails naming the PE, and no survivor
// ever returns a wrong sum.
func TestCensusNamesUnpluggedPE(t *testing.T) {
	sums, errs, end := unplugMidRun(t, papers.Config{})
	for _, k := range []int{0, 1, 3} {
		for i, s := range sums[k] {
			if s != 10 {
				t.Errorf("PE %d: sum %d was %d, want 10 (or an error naming PE 2)", k, i, s)
			}
		}
		var ae *papers.AbsentError
		if !errors.As(errs[k], &ae) || ae.Missing != 1<<2 || ae.Why != "participant" {
			t.Fatalf("PE %d: ended with %v, want an *papers.AbsentError naming PE 2 as a participant", k, errs[k])
		}
		if !errors.Is(errs[k], papers.ErrAbsent) {
			t.Errorf("PE %d: %v does not wrap ErrAbsent", k, errs[k])
		}
		t.Logf("PE %d after %d right sums: %v", k, len(sums[k]), errs[k])
		if end[k] != nil { // the census dropped PE 2: the others end proved
			t.Errorf("PE %d: the end of the run: %v, want nil", k, end[k])
		}
	}
}

// TestCensusOffMissesUnpluggedPE is the control: with the census off the
// same fault gives wrong sums and no error from them (so the test above
// tests it); the end of the run still finds it, and names every result
// since check-in as suspect.
func TestCensusOffMissesUnpluggedPE(t *testing.T) {
	sums, errs, end := unplugMidRun(t, papers.Config{CensusEvery: -1})
	for _, k := range []int{0, 1, 3} {
		if errs[k] != nil {
			t.Fatalf("PE %d: %v with the census off", k, errs[k])
		}
		if got := fmt.Sprint(sums[k][len(sums[k])-1]); got != "7" {
			t.Errorf("PE %d: last sum %s, want 7 (1+2+4: PE 2's cable out)", k, got)
		}
		var ae *papers.AbsentError
		if !errors.As(end[k], &ae) || ae.Missing != 1<<2 || ae.Why != "participant" || ae.Proven != 0 || ae.Calls != 60 {
			t.Errorf("PE %d: the end of the run: %v; want an *AbsentError naming PE 2, results 1 to 60 suspect", k, end[k])
		}
	}
}

// TestCensusInStep: the census is keyed to the calls of the public API,
// counted once at their entry whatever they are built of, so PEs that make
// different low-level operations inside one (the root of a Scatter, a
// Multicast's sources) still take it together: a mix of collectives with a
// census at every call and at every third call runs without error, and
// every PE takes as many censuses.
func TestCensusInStep(t *testing.T) {
	for _, every := range []int{1, 3} {
		var got [4]uint64
		err := emulate.Run(4, papers.Config{CensusEvery: every}, func(p *papers.PE) error {
			k := p.Self()
			in := []int16{1, 2, 3, 4}
			for i := range 30 {
				if err := p.Barrier(); err != nil {
					return err
				}
				if _, err := papers.Scatter(p, i%4, in); err != nil {
					return err
				}
				if _, err := papers.Multicast(p, (k+i)%4, uint8(k)); err != nil {
					return err
				}
				if _, err := p.Any(k == i%4); err != nil {
					return err
				}
				if _, err := papers.Reduce(p, papers.Max, int64(k)); err != nil {
					return err
				}
			}
			got[k] = p.Stats().Censuses
			return nil
		})
		if err != nil {
			t.Fatalf("census every %d: %v", every, err)
		}
		if got[0] == 0 || got != [4]uint64{got[0], got[0], got[0], got[0]} {
			t.Errorf("census every %d: censuses per PE %v, want equal and not zero", every, got)
		}
	}
}

// TestCensusFindsUnpluggedPEBetweenBarriers: barriers alone pass a
// transparent PE; the census every CensusEvery calls names it.
func TestCensusFindsUnpluggedPEBetweenBarriers(t *testing.T) {
	const every = 8
	b, err := emu.New(3)
	if err != nil {
		t.Fatal(err)
	}
	var survivors sync.WaitGroup
	survivors.Add(2)
	var calls [3]int
	var errs [3]error
	err = emulate.RunOn(b, 3, papers.Config{CensusEvery: every, Timeout: 5 * time.Second}, func(p *papers.PE) error {
		k := p.Self()
		for i := range 100 {
			if k == 1 && i == 5 {
				if err := b.Inject(emu.Fault{PE: 1, Kind: emu.Unplugged}); err != nil {
					return err
				}
				survivors.Wait()
				return p.Close() // cut off, it could not end with the others
			}
			if errs[k] = p.Barrier(); errs[k] != nil {
				break
			}
			calls[k] = i + 1
		}
		survivors.Done()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 2} {
		var ae *papers.AbsentError
		if !errors.As(errs[k], &ae) || ae.Missing != 1<<1 {
			t.Fatalf("PE %d: ended with %v, want an *papers.AbsentError naming PE 1", k, errs[k])
		}
		if calls[k] != every-1 {
			t.Errorf("PE %d: %d barriers passed, want %d (the census at call %d names PE 1)", k, calls[k], every-1, every)
		}
	}
}
