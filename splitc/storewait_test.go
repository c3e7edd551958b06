package splitc_test

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
	"github.com/ttlpapers/ttlpapers/splitc"
)

// cutLink is a PE's transport with its link to the victim's cable: while
// cut, packets to and from the victim are held, as a LAN's TCP keeps them
// while a cable is out, and go when it is back.
type cutLink struct {
	am.Transport
	victim int
	cut    *atomic.Bool
	mu     sync.Mutex
	held   []heldPacket
	// reset, when set and true, is that this PE's transport knows the
	// victim gone: its connection was reset.
	reset func() bool
}

// errReset is how a reset link's transport says the victim went.
var errReset = errors.New("connection reset by peer")

func (c *cutLink) Gone(k int) error {
	if c.reset != nil && k == c.victim && c.reset() {
		return &am.GoneError{PE: k, Cause: errReset, Died: true}
	}
	return c.Transport.Gone(k)
}

type heldPacket struct {
	dst int
	p   am.Packet
}

func (c *cutLink) Send(dst int, p *am.Packet) (bool, error) {
	if c.cut.Load() && (dst == c.victim || c.Self() == c.victim) {
		c.mu.Lock()
		c.held = append(c.held, heldPacket{dst, *p})
		c.mu.Unlock()
		return true, nil
	}
	c.flush()
	return c.Transport.Send(dst, p)
}

func (c *cutLink) Recv(net am.Net, p *am.Packet) bool {
	c.flush()
	return c.Transport.Recv(net, p)
}

// flush sends what the cut held, once it is over.
func (c *cutLink) flush() {
	if c.cut.Load() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.held) > 0 {
		h := &c.held[0]
		if ok, err := c.Transport.Send(h.dst, &h.p); !ok && err == nil {
			return // the inbox is full: at the next call
		}
		c.held = c.held[1:]
	}
}

// storeAcrossCut has 4 PEs store to the next PE and AllStoreSync, with PE
// 2's link cut for down (forever if negative) from just before the stores;
// PE resetBy's transport (none if negative) knows PE 2 gone from its
// first NAND in AllStoreSync on, when every PE is in the sum's rounds.
// It returns each PE's AllStoreSync error and how long it took.
func storeAcrossCut(t *testing.T, timeout, down time.Duration, resetBy int) (errs [4]error, took [4]time.Duration) {
	t.Helper()
	const n, victim = 4, 2
	b, err := emu.New(n)
	if err != nil {
		t.Fatal(err)
	}
	net, err := am.NewLocal(n)
	if err != nil {
		t.Fatal(err)
	}
	var cut atomic.Bool
	resetAfter := ^uint64(0) // resetBy's NANDs before its AllStoreSync, once it calls it
	join := func(p *papers.PE) (am.Transport, error) {
		c := &cutLink{Transport: net.Transport(p.Self()), victim: victim, cut: &cut}
		if p.Self() == resetBy { // its transport is asked on its own goroutine, as its Stats are
			c.reset = func() bool { return p.Stats().NANDs > resetAfter }
		}
		return c, nil
	}
	emulate.RunNet(b, n, papers.Config{Timeout: timeout}, join, func(p *papers.PE) error {
		m, err := splitc.Attach(p)
		if err != nil {
			return err
		}
		s, err := splitc.AllSpreadMalloc[int64](m, n)
		if err != nil {
			return err
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		k := p.Self()
		if k == victim {
			cut.Store(true)
			if down >= 0 {
				time.AfterFunc(down, func() { cut.Store(false) })
			}
		}
		if err := splitc.Barrier(p); err != nil { // the link is cut
			return err
		}
		start := time.Now()
		if err := splitc.Store(m, s.At((k+1)%n), int64(k)); err != nil {
			return err
		}
		if k == resetBy {
			resetAfter = p.Stats().NANDs
		}
		errs[k] = splitc.AllStoreSync(m)
		took[k] = time.Since(start)
		if errs[k] == nil {
			if got := splitc.Local(m, s)[0]; got != int64((k+n-1)%n) {
				t.Errorf("PE %d: stored %d, want %d", k, got, (k+n-1)%n)
			}
		}
		return errs[k]
	})
	return errs, took
}

// TestAllStoreSyncNamesCutLink: a PE whose link is down past the timeout
// is named by every other PE, and names them, instead of a hang (issue:
// every survivor still waiting 90 s after the fault).
func TestAllStoreSyncNamesCutLink(t *testing.T) {
	const timeout = 300 * time.Millisecond
	errs, took := storeAcrossCut(t, timeout, -1, -1)
	// The PEs end together at the round where the first of them has
	// waited out the timeout, so the others' clocks may be a little short.
	var longest time.Duration
	for k, err := range errs {
		want := peset.Of(2)
		if k == 2 {
			want = 0b1011
		}
		var te *papers.TimeoutError
		if !errors.As(err, &te) || te.Missing != want || te.Waited < timeout*9/10 {
			t.Errorf("PE %d: %v; want a *TimeoutError after %v naming %v", k, err, timeout, want)
			continue
		}
		longest = max(longest, te.Waited)
	}
	if longest < timeout {
		t.Errorf("the longest wait was %v; the PEs gave up before the timeout %v", longest, timeout)
	}
	t.Logf("named after %v (timeout %v)", took, timeout)
}

// TestAllStoreSyncRidesShortCut: a link down for less than the timeout
// only delays.
func TestAllStoreSyncRidesShortCut(t *testing.T) {
	errs, took := storeAcrossCut(t, 2*time.Second, 100*time.Millisecond, -1)
	for k, err := range errs {
		if err != nil {
			t.Errorf("PE %d: %v", k, err)
		}
	}
	t.Logf("done after %v", took)
}

// TestAllStoreSyncEndsAtLostPE: when one PE's data network knows the PE
// behind a cut link gone (its connection was reset), every PE ends at once
// with a *LostError that names it, the PE whose network found it, how it
// went (on the finder), and how long the call took; not a timeout's
// error "within 0s".
func TestAllStoreSyncEndsAtLostPE(t *testing.T) {
	const timeout, finder, victim = 10 * time.Second, 0, 2
	errs, took := storeAcrossCut(t, timeout, -1, finder)
	for k, err := range errs {
		var le *splitc.LostError
		if !errors.As(err, &le) {
			t.Errorf("PE %d: %v; want a *splitc.LostError", k, err)
			continue
		}
		if le.PE != k || le.Lost != peset.Of(victim) || le.FoundBy != peset.Of(finder) || le.Pending <= 0 {
			t.Errorf("PE %d: %+v; want PE %d, Lost %v, FoundBy %v, bytes pending", k, le, k, peset.Of(victim), peset.Of(finder))
		}
		if le.After <= 0 || le.After > took[k] || le.After >= timeout {
			t.Errorf("PE %d: ended after %v by its error, %v by the test's clock; want within that, before the timeout %v", k, le.After, took[k], timeout)
		}
		want := 0
		if k == finder {
			want = 1
		}
		if len(le.DataNet) != want {
			t.Errorf("PE %d: its data network's account %v; want %d entries", k, le.DataNet, want)
		} else if want == 1 && (le.DataNet[0].PE != victim || le.DataNet[0].How != papers.Died || le.DataNet[0].Cause != errReset.Error()) {
			t.Errorf("PE %d: its data network's account %+v; want PE %d died: %v", k, le.DataNet[0], victim, errReset)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("PE %d: %v reads as a timeout", k, err)
		}
	}
	t.Logf("ended after %v (timeout %v): %v", took, timeout, errs)
}
