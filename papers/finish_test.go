package papers_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// A PE whose program returns while the others compute is named as such:
// every other PE's next barrier fails with an *InterruptError whose
// Returned names it, at once rather than after the timeout.
func TestFinishNamesReturn(t *testing.T) {
	const n, early = 4, 1
	got := make([]error, n)
	start := time.Now()
	err := emulate.Run(n, papers.Config{Timeout: 5 * time.Second}, func(p *papers.PE) error {
		if err := p.Barrier(); err != nil {
			return err
		}
		if p.Self() == early {
			got[early] = p.Finish()
			return nil
		}
		for range 100 {
			if got[p.Self()] = p.Barrier(); got[p.Self()] != nil {
				return nil
			}
		}
		return errors.New("100 barriers passed without the PE that returned")
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the others took %v to learn of the return: as long as a timeout", d)
	}
	for k, err := range got {
		var ie *papers.InterruptError
		if k == early { // its run did not end together: it fails too
			if !errors.As(err, &ie) || ie.Returned != 1<<early || ie.Members != 0b1101 {
				t.Errorf("PE %d's Finish: %v; want an *InterruptError naming it returned and PEs 0, 2, 3 going on", k, err)
			}
			continue
		}
		if !errors.As(err, &ie) || ie.Returned != 1<<early || ie.Left != 1<<early || ie.Code != papers.ReturnCode {
			t.Errorf("PE %d: %v; want an *InterruptError with Returned and Left PE %d, code %#x", k, err, early, papers.ReturnCode)
		}
	}
}

// At a normal end every PE finishes together, quickly, leaves its port
// transparent, and the next run on the board checks in; a PE that
// finishes later, within the timeout, fails no one.
func TestFinishAtNormalEnd(t *testing.T) {
	const n = 4
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, late := range []time.Duration{0, 20 * time.Millisecond} {
		took := make([]time.Duration, n)
		err := emulate.RunOn(b, n, papers.Config{Timeout: 300 * time.Millisecond}, func(p *papers.PE) error {
			if err := p.Barrier(); err != nil {
				return err
			}
			if p.Self() == 0 {
				time.Sleep(late)
			}
			port := p.Port()
			start := time.Now()
			if err := p.Finish(); err != nil {
				return err
			}
			took[p.Self()] = time.Since(start)
			if d, c := port.ReadData(), port.ReadControl(); d != 0xcf || c != 0 {
				return fmt.Errorf("port after Finish: data %#02x control %#02x, want 0xcf and 0", d, c)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("PE 0 finishing %v after the others: %v", late, err)
		}
		if took[0] >= 300*time.Millisecond { // it waited out the others' timeout
			t.Errorf("PE 0 finishing %v after the others: its Finish took %v", late, took[0])
		}
		t.Logf("PE 0 finishing %v after the others: Finish took %v", late, took)
	}
}

// A PE that returns later than the others' timeout leaves a run that
// cannot be proven: the others give up waiting and fail with the
// timeout, and the late PE's end-of-run census names them; the next run
// on the board works.
func TestFinishBeyondTimeoutFails(t *testing.T) {
	const n = 4
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	ends := make([]error, n)
	err = emulate.RunOn(b, n, papers.Config{Timeout: 200 * time.Millisecond}, func(p *papers.PE) error {
		if err := p.Barrier(); err != nil {
			return err
		}
		if p.Self() == 0 {
			time.Sleep(500 * time.Millisecond)
		}
		ends[p.Self()] = p.Finish()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var ae *papers.AbsentError
	if !errors.As(ends[0], &ae) || ae.Missing != 0b1110 {
		t.Errorf("late PE 0: %v; want the end's census to name PEs 1, 2, 3", ends[0])
	}
	for k := 1; k < n; k++ {
		var te *papers.TimeoutError
		if !errors.As(ends[k], &te) {
			t.Errorf("PE %d: %v; want a timeout", k, ends[k])
		}
	}
	if err := emulate.RunOn(b, n, papers.Config{}, func(p *papers.PE) error { return p.Barrier() }); err != nil {
		t.Errorf("the next run: %v", err)
	}
}

// BenchmarkEnd measures what Finish costs beside Close at a normal end: 4
// PEs in-process, each run a check-in, a barrier and the end; end-ns/op
// is PE 0's time in Close or Finish.
func BenchmarkEnd(b *testing.B) {
	board, err := emu.New(4)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		end  func(*papers.PE) error
	}{{"Close", (*papers.PE).Close}, {"Finish", (*papers.PE).Finish}} {
		b.Run(c.name, func(b *testing.B) {
			var in time.Duration
			for b.Loop() {
				err := emulate.RunOn(board, 4, papers.Config{}, func(p *papers.PE) error {
					if err := p.Barrier(); err != nil {
						return err
					}
					start := time.Now()
					err := c.end(p)
					if p.Self() == 0 {
						in += time.Since(start)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(in.Nanoseconds())/float64(b.N), "end-ns/op")
		})
	}
}
