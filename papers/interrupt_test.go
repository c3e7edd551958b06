package papers

import (
	"errors"
	"testing"
)

// A PE waiting in a barrier gets the interrupt another PE raises, even when
// the raiser returns (cancelling the emulation's context) the moment the
// acknowledge completes.
func TestInterruptReachesWaitingPE(t *testing.T) {
	bad := 0
	for i := 0; i < 100; i++ {
		got := make([]error, 2)
		Emulate(2, Config{}, func(p *PE) error {
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
		var ie *InterruptError
		if !errors.As(got[1], &ie) {
			bad++
			t.Logf("run %d: PE 0 Interrupt: %v; PE 1 barrier: %v", i, got[0], got[1])
		}
	}
	if bad > 0 {
		t.Errorf("%d of 100 runs lost the interrupt", bad)
	}
}
