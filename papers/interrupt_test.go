package papers_test

import (
	"errors"
	"testing"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
)

// A PE waiting in a barrier gets the interrupt another PE raises, even when
// the raiser returns (cancelling the emulation's context) the moment the
// acknowledge completes.
func TestInterruptReachesWaitingPE(t *testing.T) {
	bad := 0
	for i := 0; i < 100; i++ {
		got := make([]error, 2)
		emulate.Run(2, papers.Config{}, func(p *papers.PE) error {
			if err := p.Barrier(); err != nil {
				got[p.Self()] = err
				return err
			}
			if p.Self() == 0 {
				_, err := p.Interrupt(0xf)
				got[0] = err
				if err != nil {
					return err
				}
				return errors.New("exit")
			}
			got[1] = p.Barrier()
			return got[1]
		})
		var ie *papers.InterruptError
		if !errors.As(got[1], &ie) {
			bad++
			t.Logf("run %d: papers.PE 0 Interrupt: %v; papers.PE 1 barrier: %v", i, got[0], got[1])
		}
	}
	if bad > 0 {
		t.Errorf("%d of 100 runs lost the interrupt", bad)
	}
}
