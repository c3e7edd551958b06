package papers_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// TestCheckInAgrees: PEs started for another PE count, running another
// program (here: another tag), or with an id that another PC has too, are
// named at check-in by every PE, with what differs, and not as a timeout,
// whether the PEs start together or PEs 2 and 3 start after the others
// found it; the same ports then check in cleanly.
func TestCheckInAgrees(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(map[bool]string{false: "together", true: "late"}[late], func(t *testing.T) { checkInAgrees(t, late) })
	}
}

func checkInAgrees(t *testing.T, late bool) {
	const n = 4
	for _, c := range []struct {
		name string
		cfg  func(k int) papers.Config // PE k's config; each has n ports
		what string
		odd  peset.Set
		says []string
	}{
		{"PEs=8 on PE 1", func(k int) papers.Config {
			return papers.Config{PE: k, PEs: map[bool]int{true: 8, false: n}[k == 1]}
		}, "PE count", 1 << 1, []string{"PE 1 was started for 8 PEs; PEs 0, 2, 3 for 4"}},
		{"PEs=2 on PE 0", func(k int) papers.Config {
			return papers.Config{PE: k, PEs: map[bool]int{true: 2, false: n}[k == 0]}
		}, "PE count", 1 << 0, []string{"PE 0 was started for 2 PEs; PEs 1, 2, 3 for 4"}},
		{"tag on PE 3", func(k int) papers.Config {
			return papers.Config{PE: k, PEs: n, Tag: map[bool]string{true: "b", false: "a"}[k == 3]}
		}, "program", 1 << 3, []string{"PE 3 runs ", `tag "b"; PEs 0, 1, 2 run `, `tag "a"`}},
		{"id 2 twice", func(k int) papers.Config {
			return papers.Config{PE: min(k, 2), PEs: n}
		}, "PE id", 1 << 2, []string{"PE id 2 was started twice"}},
	} {
		b, err := emu.New(n)
		if err != nil {
			t.Fatal(err)
		}
		// Late PEs' ports are transparent, as an earlier run's end left
		// them: the others meet without them.
		if late {
			if err := setPorts(b, n, func(k int) leftover { return leftovers[2] }, false); err != nil {
				t.Fatal(err)
			}
		}
		// A check-in long beside the test: a mismatch not found would end
		// as a timeout, not as the error wanted.
		errs := openAll(b, n, func(k int) papers.Config {
			if late && k >= 2 {
				time.Sleep(300 * time.Millisecond) // the others meet first (a stagger, not a bound)
			}
			cfg := c.cfg(k)
			cfg.Timeout, cfg.CheckInTimeout = time.Second, time.Minute
			return cfg
		})
		for k, err := range errs {
			var me *papers.MismatchError
			if !errors.As(err, &me) || me.What != c.what || me.Odd != c.odd || !contains(err, c.says...) {
				t.Errorf("%s: PE %d: %v; want a MismatchError (%s) naming %#x, saying %q", c.name, k, err, c.what, c.odd, c.says)
			}
		}
		// The failed PEs parked their ports: the next run checks in.
		err = errors.Join(openAll(b, n, func(k int) papers.Config {
			return papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: time.Minute}
		})...)
		if err != nil {
			t.Errorf("%s: the next run: %v", c.name, err)
		}
	}
}

// TestProgram: the identity check-in compares names this test binary by
// its main package, and stays the same (PCs that built the same source
// agree by it).
func TestProgram(t *testing.T) {
	p := papers.Program()
	if !strings.HasPrefix(p, "github.com/ttlpapers/ttlpapers/papers.test") || p != papers.Program() {
		t.Errorf("Program() = %q, want this test binary's main package path first, the same every call", p)
	}
}

// TestCheckInLeave: a PE whose check-in its context ends (a stop signal)
// after the others counted it announces its departure, and they fail at
// once naming it, not after their check-in's timeout; the next run checks
// in.
func TestCheckInLeave(t *testing.T) {
	const n, leaver, late = 4, 1, 3
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	// The late PE's port is transparent, as an earlier run's Leave left
	// it: the others vote, count each other and wait for it.
	if err := setPorts(b, n, func(k int) leftover { return leftovers[2] }, false); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n - 1 {
		port, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			ctx := context.Background()
			if k == leaver {
				ctx = stop
			}
			p, err := papers.Open(port, papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: time.Minute, Context: ctx, FreshBoard: true})
			if err == nil {
				p.Close()
			}
			errs[k] = err
		})
	}
	// Every PE waits for the late one's arrival (its LED red throughout)
	// only after a vote that counted every PE there: the first wait with
	// a red LED, the arrival's grace, is left out (FreshBoard), and each
	// arrival's acknowledge is a NAND of every PE there.
	for red := 0; red < 1000; red++ {
		for k := range n - 1 {
			if b.LED(k) != lpt.Red {
				red = 0
			}
		}
		runtime.Gosched()
	}
	cancel()
	wg.Wait()
	for k, err := range errs[:n-1] {
		var ie *papers.InterruptError
		switch {
		case k == leaver && !errors.Is(err, context.Canceled):
			t.Errorf("PE %d (stopped): %v, want the context's end", k, err)
		case k != leaver && (!errors.As(err, &ie) || ie.Left != 1<<leaver):
			t.Errorf("PE %d: %v, want an InterruptError naming PE %d as left", k, err, leaver)
		}
	}
	if err := errors.Join(openAll(b, n, func(k int) papers.Config {
		return papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: time.Minute}
	})...); err != nil {
		t.Errorf("the next run: %v", err)
	}
}

// dyingPort is a port whose PE is killed when die is set: its registers
// keep what they held, as a killed program's port does, whatever the PE
// goes on writing.
type dyingPort struct {
	*emu.Port
	die atomic.Bool
}

func (d *dyingPort) WriteData(v uint8) {
	if !d.die.Load() {
		d.Port.WriteData(v)
	}
}

func (d *dyingPort) WriteControl(v uint8) {
	if !d.die.Load() {
		d.Port.WriteControl(v)
	}
}

// TestCheckInDeadPE: a PE that a check-in vote counted and that dies while
// it waits for the last PE holds the last one's acknowledge with its
// P_NAK. The PEs it checked in with fail after the operation timeout, not
// CheckInTimeout, and say that a PE of this check-in stopped; the next
// run checks in.
func TestCheckInDeadPE(t *testing.T) {
	const n, victim, late = 4, 1, 3
	const timeout = 2 * time.Second // a healthy PE acknowledges well within it at load 30
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := setPorts(b, n, func(k int) leftover { return leftovers[2] }, false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make([]error, n)
	ports := make([]*dyingPort, n)
	ended := make([]chan struct{}, n)
	var wg sync.WaitGroup
	open := func(k int) {
		port, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		ports[k], ended[k] = &dyingPort{Port: port}, make(chan struct{})
		wg.Go(func() {
			defer close(ended[k])
			p, err := papers.Open(ports[k], papers.Config{PE: k, PEs: n, Timeout: timeout, CheckInTimeout: time.Minute, Context: ctx, FreshBoard: true})
			if err == nil {
				p.Close()
			}
			errs[k] = err
		})
	}
	for k := range late {
		open(k)
	}
	for red := 0; red < 1000; red++ { // every PE there waits for the late one (TestCheckInLeave)
		for k := range late {
			if b.LED(k) != lpt.Red {
				red = 0
			}
		}
		runtime.Gosched()
	}
	ports[victim].die.Store(true)
	open(late)
	for k := range late {
		if k != victim {
			<-ended[k]
		}
	}
	cancel() // the late PE cannot tell a dead PE from one not started: it would wait out its check-in
	wg.Wait()
	for k := range late {
		if k == victim {
			continue
		}
		te, ok := errors.AsType[*papers.TimeoutError](errs[k])
		if !ok || te.Waited != timeout || !contains(errs[k], "a PE of this check-in stopped answering", "candidates "+peset.Set(1<<victim|1<<late|1<<(2-k)).String()) {
			t.Errorf("PE %d: %v; want a check-in timeout after %v saying a PE of this check-in stopped, PEs %d, %d and %d the candidates", k, errs[k], timeout, victim, 2-k, late)
		}
	}
	if err := errors.Join(openAll(b, n, func(k int) papers.Config {
		return papers.Config{PE: k, PEs: n, Timeout: time.Second, CheckInTimeout: time.Minute}
	})...); err != nil {
		t.Errorf("the next run: %v", err)
	}
}
