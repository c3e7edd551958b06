package lpttest_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/lpttest"
)

// regs is a port that is only registers; it logs each operation.
type regs struct {
	data, control uint8
	closed        bool
	log           func()
}

func (p *regs) op() {
	if p.log != nil {
		p.log()
	}
}
func (p *regs) WriteData(v uint8)    { p.op(); p.data = v }
func (p *regs) ReadData() uint8      { p.op(); return p.data }
func (p *regs) ReadStatus() uint8    { p.op(); return 0x78 }
func (p *regs) WriteControl(v uint8) { p.op(); p.control = v }
func (p *regs) ReadControl() uint8   { p.op(); return p.control }
func (p *regs) Err() error           { return nil }
func (p *regs) Close() error         { p.closed = true; return nil }

func TestCounting(t *testing.T) {
	r := &regs{}
	c := lpttest.NewCounting(r)
	c.WriteData(lpt.Transparent)
	c.ReadData()
	c.ReadStatus()
	c.WriteControl(lpt.SEL)
	c.ReadControl()
	if c.Ops() != 5 {
		t.Errorf("5 operations counted as %d", c.Ops())
	}
	if r.data != lpt.Transparent || r.control != lpt.SEL {
		t.Errorf("the writes did not reach the port: data %#02x, control %#02x", r.data, r.control)
	}
	if err := c.Close(); err != nil || r.closed {
		t.Errorf("Close = %v, closed the port under it: %v; want it left open", err, r.closed)
	}
}

// rendezvous is a reusable meeting of n goroutines.
type rendezvous struct {
	mu    sync.Mutex
	n, in int
	gen   chan struct{}
}

func (r *rendezvous) meet() error {
	r.mu.Lock()
	ch := r.gen
	if r.in++; r.in == r.n {
		r.in, r.gen = 0, make(chan struct{})
		close(ch)
		r.mu.Unlock()
		return nil
	}
	r.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("rendezvous timed out")
	}
}

// TestLockstep: while on, no PE starts its k-th operation before every PE
// has started its (k-1)-th, however unevenly the PEs run.
func TestLockstep(t *testing.T) {
	const pes, ops = 3, 200
	rv := &rendezvous{n: pes, gen: make(chan struct{})}
	var mu sync.Mutex
	var order []int // the PE of each operation, in the order they happened
	var wg sync.WaitGroup
	for pe := range pes {
		l := &lpttest.Lockstep{Port: &regs{log: func() { mu.Lock(); order = append(order, pe); mu.Unlock() }}, Meet: rv.meet, On: true}
		wg.Go(func() {
			for i := range ops {
				if pe == 0 && i%10 == 0 {
					time.Sleep(time.Millisecond) // PE 0 lags
				}
				l.ReadStatus()
			}
			if err := l.Err(); err != nil {
				t.Errorf("PE %d: %v", pe, err)
			}
		})
	}
	wg.Wait()
	if len(order) != pes*ops {
		t.Fatalf("%d operations logged, want %d", len(order), pes*ops)
	}
	for k := range ops {
		seen := map[int]bool{}
		for _, pe := range order[k*pes : (k+1)*pes] {
			seen[pe] = true
		}
		if len(seen) != pes {
			t.Fatalf("round %d: operations of PEs %v: one PE ran ahead", k, order[k*pes:(k+1)*pes])
		}
	}
}

func TestLockstepOffAndFailed(t *testing.T) {
	meets := 0
	fail := errors.New("nobody came")
	l := &lpttest.Lockstep{Port: &regs{}, Meet: func() error { meets++; return fail }}
	l.WriteData(0)
	if meets != 0 || l.Err() != nil {
		t.Fatalf("off: %d meets, Err %v; want none", meets, l.Err())
	}
	l.On = true
	l.WriteData(0)
	l.ReadData()
	if meets != 1 || !errors.Is(l.Err(), fail) {
		t.Errorf("on, meet failing: %d meets, Err %v; want 1 meet, then Err wrapping %v", meets, l.Err(), fail)
	}
}
