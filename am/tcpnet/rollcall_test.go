//go:build linux

package tcpnet_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Where the board cannot name the PE that holds a barrier — beyond four
// PEs, PEs share its data lines; a dead PE's last data may hold its line
// low — the data network names it: a PE that went without leaving (its
// connections ended) at once, before the timeout, by the barrier's wait
// itself (papers.TimeoutError.Dead); one that does not answer a ping
// (stopped) at the roll call after the timeout. Every survivor names
// exactly the victim, and says how. Without the wait's question to the
// data network the dead victim is named by the roll call, which fails
// the test.
func TestRollCallAsksDataNet(t *testing.T) {
	for _, c := range []struct {
		n, victim int
		lineLow   bool // the victim's data lines held low (every line answers the roll call)
		dies      bool // its connections end without a departure, as when its process is killed
		how       papers.AbsenceKind
	}{
		{8, 1, false, false, papers.Silent}, // line D1 is PE 5's too
		{5, 4, false, true, papers.Died},    // line D0 is PE 0's too
		{4, 2, true, true, papers.Died},
		{4, 2, true, false, papers.Silent},
	} {
		name := fmt.Sprintf("%d PEs, PE %d %v, line low %v", c.n, c.victim, c.how, c.lineLow)
		t.Run(name, func(t *testing.T) {
			// The survivors' roll call meets in NANDs after each one's
			// barrier timed out: at load 18 under -race, 8 goroutine PEs
			// timed out seconds apart, and a 3 s timeout failed the
			// roll call itself. The default takes the lag.
			const timeout = papers.DefaultTimeout
			b, err := emu.New(c.n)
			if err != nil {
				t.Fatal(err)
			}
			nets := make([]*tcpnet.Net, c.n)
			got := make([]error, c.n)
			var survivors sync.WaitGroup
			survivors.Add(c.n - 1)
			done := make(chan struct{})
			go func() { survivors.Wait(); close(done) }()
			err = emulate.RunNet(b, c.n, papers.Config{Timeout: timeout}, func(p *papers.PE) (am.Transport, error) {
				l, err := tcpnet.Listen("")
				if err != nil {
					return nil, err
				}
				tn, err := l.Join(p, timeout)
				nets[p.Self()] = tn
				return tn, err
			}, func(p *papers.PE) error {
				if err := p.Barrier(); err != nil {
					return err
				}
				if p.Self() == c.victim {
					if c.lineLow {
						if err := p.SetData(0); err != nil {
							return err
						}
					}
					if c.dies {
						nets[c.victim].Close()
					}
					<-done // silent until the others are done: no port write, no poll
					return nil
				}
				defer survivors.Done()
				got[p.Self()] = p.Barrier()
				return nil
			})
			// A victim cut from the data network fails the end of the run
			// too, though it is on the board: the survivors' Finish
			// finds it dead there.
			if err != nil && !c.dies {
				t.Fatal(err)
			}
			for k, err := range got {
				if k == c.victim {
					continue
				}
				var te *papers.TimeoutError
				if !errors.As(err, &te) || te.Missing != 1<<c.victim || len(te.DataNet) != 1 || te.DataNet[0].PE != c.victim || te.DataNet[0].How != c.how {
					t.Errorf("PE %d: %v; want a timeout naming PE %d, by the data network, as %v", k, err, c.victim, c.how)
				} else if te.Dead != c.dies || te.RollCall == c.dies {
					t.Errorf("PE %d: %v: ended early by the data network %v, after a roll call %v; want %v, %v", k, err, te.Dead, te.RollCall, c.dies, !c.dies)
				} else if r := pereport.From(err); r.Kind != pereport.Timeout || !slices.Equal(r.Named, []int{c.victim}) {
					t.Errorf("PE %d: report %+v; want a timeout naming PE %d", k, r, c.victim)
				}
			}
			t.Logf("PE 0: %v", got[0])
		})
	}
}
