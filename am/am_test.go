package am_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/internal/leakcheck"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/papers"
)

// TestMain fails the tests when they leave goroutines running.
func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// run runs fn on n emulated PEs, each with its endpoint.
func run(t testing.TB, n int, timeout time.Duration, fn func(p *papers.PE, ep *am.Endpoint) error) error {
	t.Helper()
	return emulate.Run(n, papers.Config{Timeout: timeout}, func(p *papers.PE) error {
		ep, err := am.Of(p)
		if err != nil {
			return err
		}
		return fn(p, ep)
	})
}

// counterPE registers, in the same order on every PE, a request handler
// that counts and replies, and the reply handler that counts the replies.
type counterPE struct {
	ep             *am.Endpoint
	requests, acks int
	hRequest, hAck am.HandlerID
	replyErr       error
	lastArgs       am.Args
	lastSrc        int
}

func newCounter(ep *am.Endpoint, reply bool) *counterPE {
	c := &counterPE{ep: ep}
	c.hRequest = ep.Register(func(m *am.Msg) {
		c.requests++
		c.lastArgs, c.lastSrc = m.Args, m.Src
		if reply {
			if err := m.Reply(c.hAck, am.Args{m.Args[0] + 1}); err != nil {
				c.replyErr = err
			}
		}
	})
	c.hAck = ep.Register(func(m *am.Msg) { c.acks++; c.lastArgs = m.Args })
	return c
}

func TestRequestReply(t *testing.T) {
	err := run(t, 3, 0, func(p *papers.PE, ep *am.Endpoint) error {
		c := newCounter(ep, true)
		if ep.Self() == 0 {
			for dst := 1; dst < ep.PEs(); dst++ {
				before := c.acks
				if err := ep.Request(dst, c.hRequest, am.Args{uint64(10 * dst), 2, 3, 4}); err != nil {
					return err
				}
				if err := ep.Wait("reply", dst, func() bool { return c.acks > before }); err != nil {
					return err
				}
				if c.lastArgs[0] != uint64(10*dst+1) {
					t.Errorf("reply from PE %d carried %d, want %d", dst, c.lastArgs[0], 10*dst+1)
				}
			}
		} else if err := ep.Wait("request", 0, func() bool { return c.requests == 1 }); err != nil {
			return err
		} else if c.lastSrc != 0 || c.lastArgs != (am.Args{uint64(10 * ep.Self()), 2, 3, 4}) {
			t.Errorf("PE %d got %v from PE %d, want [%d 2 3 4] from PE 0", ep.Self(), c.lastArgs, c.lastSrc, 10*ep.Self())
		}
		if c.replyErr != nil {
			return c.replyErr
		}
		return p.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFlood has every PE send thousands of requests to every other at
// once, each answered: inboxes fill, senders poll while they retry, the
// replies that find a full inbox wait in the replier's queue — and every
// request and reply arrives.
func TestFlood(t *testing.T) {
	const per = 3000
	const n = 3
	var deferred atomic.Uint64
	err := run(t, n, 0, func(p *papers.PE, ep *am.Endpoint) error {
		c := newCounter(ep, true)
		for i := range per {
			for d := 1; d < n; d++ {
				if err := ep.Request((ep.Self()+d)%n, c.hRequest, am.Args{uint64(i)}); err != nil {
					return err
				}
			}
		}
		if err := ep.Wait("flood", -1, func() bool { return c.acks == per*(n-1) && c.requests == per*(n-1) }); err != nil {
			return err
		}
		deferred.Add(ep.Stats().Deferred)
		if c.replyErr != nil {
			return c.replyErr
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replies queued by handlers because the requester's inbox was full: %d", deferred.Load())
}

func TestPollingRules(t *testing.T) {
	type seen struct{ poll, wait, request, long, reply2, replyFromReply, late error }
	var got seen
	err := run(t, 2, time.Second, func(p *papers.PE, ep *am.Endpoint) error {
		var keep *am.Msg
		var hReply am.HandlerID
		hReq := ep.Register(func(m *am.Msg) {
			_, got.poll = ep.Poll(am.PollBoth, true)
			got.wait = ep.Wait("x", 0, func() bool { return true })
			got.request = ep.Request(0, 0, am.Args{})
			got.long = m.ReplyMedium(hReply, am.Args{}, make([]byte, ep.MaxPayload()+1))
			if err := m.Reply(hReply, am.Args{}); err != nil {
				panic(err)
			}
			got.reply2 = m.Reply(hReply, am.Args{})
			keep = m
		})
		done := false
		hReply = ep.Register(func(m *am.Msg) {
			got.replyFromReply = m.Reply(hReply, am.Args{})
			done = true
		})
		if ep.Self() == 0 {
			if err := ep.Request(1, hReq, am.Args{}); err != nil {
				return err
			}
			err := ep.Wait("reply", 1, func() bool { return done })
			if !errors.Is(err, am.ErrHandlerSend) {
				t.Errorf("the poll that ran a reply handler that replied returned %v, want ErrHandlerSend", err)
			}
		} else {
			_, err := ep.Poll(am.PollBoth, false)
			for keep == nil && err == nil {
				_, err = ep.Poll(am.PollBoth, false)
			}
			if !errors.Is(err, am.ErrInHandler) {
				t.Errorf("the poll that ran a handler that polled returned %v, want ErrInHandler", err)
			}
			got.late = keep.Reply(hReply, am.Args{})
		}
		return p.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range map[string]struct {
		err  error
		want error
	}{
		"Poll in a handler":            {got.poll, am.ErrInHandler},
		"Wait in a handler":            {got.wait, am.ErrInHandler},
		"Request in a handler":         {got.request, am.ErrHandlerSend},
		"Reply longer than MaxPayload": {got.long, papers.ErrArgument},
		"second Reply":                 {got.reply2, am.ErrHandlerSend},
		"Reply from a reply handler":   {got.replyFromReply, am.ErrHandlerSend},
		"Reply after the handler ends": {got.late, am.ErrHandlerSend},
	} {
		if !errors.Is(e.err, e.want) {
			t.Errorf("%s: %v, want %v", name, e.err, e.want)
		}
	}
}

// TestGone: a PE whose program returns, fails or panics while another
// waits for its reply ends that wait in an error naming it, at once.
func TestGone(t *testing.T) {
	for _, how := range []string{"returns", "fails", "panics"} {
		t.Run(how, func(t *testing.T) {
			var waitErr error
			start := time.Now()
			err := run(t, 2, 20*time.Second, func(p *papers.PE, ep *am.Endpoint) error {
				c := newCounter(ep, false) // PE 1 never replies
				if ep.Self() == 1 {
					if err := ep.Wait("request", 0, func() bool { return c.requests == 1 }); err != nil {
						return err
					}
					switch how {
					case "fails":
						return errors.New("boom")
					case "panics":
						panic("boom")
					}
					// As a program that returns leaves at the end of the
					// run (its runner closes the endpoint after the others
					// return): here before PE 0 has.
					return ep.Close()
				}
				if err := ep.Request(1, c.hRequest, am.Args{}); err != nil {
					return err
				}
				waitErr = ep.Wait("reply", 1, func() bool { return c.acks == 1 })
				return nil
			})
			var g *am.GoneError
			if !errors.As(waitErr, &g) || g.PE != 1 || !strings.Contains(waitErr.Error(), "PE 1 has left") {
				t.Fatalf("wait on PE 1: %v, want a *GoneError naming PE 1", waitErr)
			}
			if (how == "returns") != (err == nil) {
				t.Errorf("run: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the wait took %v: it should end when PE 1 leaves, not at the timeout", d)
			}
			if how == "fails" && !strings.Contains(waitErr.Error(), "boom") {
				t.Errorf("%v does not say why PE 1 left", waitErr)
			}
		})
	}
}

// TestTimeout: a PE that computes without polling is waited for no longer
// than the timeout, and named.
func TestTimeout(t *testing.T) {
	var waitErr error
	err := run(t, 2, 100*time.Millisecond, func(p *papers.PE, ep *am.Endpoint) error {
		c := newCounter(ep, true)
		if ep.Self() == 1 {
			time.Sleep(400 * time.Millisecond) // not polling
			_, err := ep.Poll(am.PollBoth, true)
			if g := (*am.GoneError)(nil); errors.As(err, &g) && g.PE == 0 {
				return nil // the reply to PE 0, which has gone meanwhile
			}
			return err
		}
		if err := ep.Request(1, c.hRequest, am.Args{}); err != nil {
			return err
		}
		waitErr = ep.Wait("reply", 1, func() bool { return c.acks == 1 })
		return nil
	})
	var te *papers.TimeoutError
	if !errors.As(waitErr, &te) || te.Missing != 1<<1 || !errors.Is(waitErr, os.ErrDeadlineExceeded) {
		t.Fatalf("wait: %v, want a *TimeoutError on PE 1", waitErr)
	}
	// PE 0 returned about the timeout before PE 1: whether the run ends
	// together depends on the load; its end is not what this tests.
	t.Logf("run: %v", err)
}

// TestNothingLost: messages in a PE's inbox when its program returns are
// handled by its Close; a message sent after it left is an error for the
// sender.
func TestNothingLost(t *testing.T) {
	var c1 *counterPE
	var late error
	err := run(t, 2, 0, func(p *papers.PE, ep *am.Endpoint) error {
		c := newCounter(ep, false)
		if ep.Self() == 1 {
			c1 = c
			if err := p.Barrier(); err != nil {
				return err
			}
			return ep.Close() // leave without polling, before PE 0 returns
		}
		for range 10 {
			if err := ep.Send(1, am.Left, false, 0, c.hRequest, am.Args{}, nil); err != nil {
				return err
			}
		}
		if err := p.Barrier(); err != nil {
			return err
		}
		for i := 0; late == nil && i < 5000; i++ {
			late = ep.Send(1, am.Left, false, 0, c.hRequest, am.Args{}, nil)
			time.Sleep(100 * time.Microsecond)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var g *am.GoneError
	if !errors.As(late, &g) || g.PE != 1 {
		t.Errorf("send to a PE that left: %v, want a *GoneError naming PE 1", late)
	}
	if c1.requests < 10 {
		t.Errorf("PE 1 handled %d of the 10 messages sent before it returned", c1.requests)
	}
}

func TestUnknownHandler(t *testing.T) {
	var pollErr error
	err := run(t, 2, 0, func(p *papers.PE, ep *am.Endpoint) error {
		if ep.Self() == 0 {
			if err := ep.Request(1, 7, am.Args{}); err != nil {
				return err
			}
		} else {
			for pollErr == nil {
				_, pollErr = ep.Poll(am.PollBoth, true)
			}
		}
		return p.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
	if pollErr == nil || !strings.Contains(pollErr.Error(), "handler 7") {
		t.Errorf("poll of an unknown handler: %v", pollErr)
	}
}

func TestBadArguments(t *testing.T) {
	err := run(t, 2, 0, func(p *papers.PE, ep *am.Endpoint) error {
		if err := ep.Request(2, 0, am.Args{}); !errors.Is(err, papers.ErrArgument) {
			t.Errorf("request to PE 2 of 2: %v", err)
		}
		if err := ep.RequestMedium(0, 0, am.Args{}, make([]byte, ep.MaxPayload()+1)); !errors.Is(err, papers.ErrArgument) {
			t.Errorf("oversized payload: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOfWithoutNetwork(t *testing.T) {
	// A papers PE opened on its own has no network: am.Of says how to get one.
	err := emulate.Run(1, papers.Config{}, func(p *papers.PE) error {
		p.AttachDataNet(nil)
		_, err := am.Of(p)
		if !errors.Is(err, am.ErrNoNetwork) {
			t.Errorf("Of: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStaged: payloads longer than MaxMedium, on both networks and in both
// directions at once, many times the staging rings' size, arrive whole and
// in order (a handler's reply may not be that long: TestPollingRules).
func TestStaged(t *testing.T) {
	const count = 150
	err := run(t, 2, 0, func(p *papers.PE, ep *am.Endpoint) error {
		if ep.MaxPayload() <= am.MaxMedium {
			return fmt.Errorf("in-process MaxPayload %d: not staged", ep.MaxPayload())
		}
		sizes := []int{am.MaxMedium + 1, 1000, 4093, ep.MaxPayload(), 12345, ep.MaxPayload() - 3, 70000}
		got, next := 0, [2]int{0, 1} // payload i goes on network i&1: in order on each
		var bad error
		h := ep.Register(func(m *am.Msg) {
			i := int(m.Args[0])
			if i != next[m.Net] || len(m.Payload) != sizes[i%len(sizes)] {
				bad = fmt.Errorf("PE %d: payload %d of %d bytes arrived on the %v network when %d was due", ep.Self(), i, len(m.Payload), m.Net, next[m.Net])
			} else if err := testenv.CheckPayload(i, m.Payload); err != nil && bad == nil {
				bad = err
			}
			got++
			next[m.Net] += 2
		})
		buf := make([]byte, ep.MaxPayload())
		other := 1 - ep.Self()
		for i := range count {
			b := buf[:sizes[i%len(sizes)]]
			for j := range b {
				b[j] = testenv.Pattern(i, j)
			}
			if err := ep.Send(other, am.Net(i&1), false, am.PollBoth, h, am.Args{uint64(i)}, b); err != nil {
				return err
			}
		}
		if err := ep.Wait("payloads", other, func() bool { return got == count || bad != nil }); err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
		return p.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStagedReplies: a handler replies with long payloads to a requester
// that does not poll for replies while it sends, so they wait in the
// replier's queue; each arrives whole and in order.
func TestStagedReplies(t *testing.T) {
	const count = 40
	size := func(i int) int { return 100000 + 997*i }
	var deferred uint64
	served := make(chan struct{}) // PE 0 polls for replies only once PE 1 has answered every request
	err := run(t, 2, 0, func(p *papers.PE, ep *am.Endpoint) error {
		got, handled := 0, 0
		var bad error
		buf := make([]byte, size(count))
		var hRep am.HandlerID
		hReq := ep.Register(func(m *am.Msg) {
			i := int(m.Args[0])
			b := buf[:size(i)]
			for j := range b {
				b[j] = testenv.Pattern(i, j)
			}
			handled++
			if err := m.ReplyMedium(hRep, am.Args{uint64(i)}, b); err != nil && bad == nil {
				bad = err
			}
		})
		hRep = ep.Register(func(m *am.Msg) {
			i := int(m.Args[0])
			if i != got || len(m.Payload) != size(i) {
				bad = fmt.Errorf("reply %d of %d bytes arrived when %d was due", i, len(m.Payload), got)
			} else if err := testenv.CheckPayload(i, m.Payload); err != nil && bad == nil {
				bad = err
			}
			got++
		})
		if ep.Self() == 0 {
			for i := range count {
				if err := ep.Send(1, am.Left, false, am.PollLeft, hReq, am.Args{uint64(i)}, nil); err != nil {
					return err
				}
			}
			<-served
			if err := ep.Wait("replies", 1, func() bool { return got == count || bad != nil }); err != nil {
				return err
			}
		} else {
			err := ep.Wait("requests", 0, func() bool { return handled == count || bad != nil })
			deferred = ep.Stats().Deferred
			close(served)
			if err != nil {
				return err
			}
		}
		if bad != nil {
			return bad
		}
		return am.Barrier(p) // it polls: the queued replies go
	})
	if err != nil {
		t.Fatal(err)
	}
	if deferred == 0 {
		t.Errorf("no reply waited in the queue: the test did not fill the requester's side")
	}
}

// TestStagedFaults: a PE that stops polling while another stages payloads
// for it is named when the rings are full and the timeout has passed; one
// that leaves is named by the next send and by one-sided access to its
// memory; and every payload a send accepted is handled.
func TestStagedFaults(t *testing.T) {
	for _, how := range []string{"stops", "leaves"} {
		t.Run(how, func(t *testing.T) {
			var sendErr, getErr error
			sent, handled := 0, 0
			resume := make(chan struct{})
			err := run(t, 2, 200*time.Millisecond, func(p *papers.PE, ep *am.Endpoint) error {
				h := ep.Register(func(*am.Msg) { handled++ })
				if _, _, err := ep.Direct().Allocate(64); err != nil {
					return err
				}
				if err := p.Barrier(); err != nil {
					return err
				}
				if ep.Self() == 1 {
					if how == "stops" {
						<-resume // not polling
						return nil
					}
					return ep.Close() // leave before PE 0 returns
				}
				defer close(resume)
				buf := make([]byte, ep.MaxPayload())
				for i := 0; i < 1000 && sendErr == nil; i++ {
					if sendErr = ep.RequestMedium(1, h, am.Args{}, buf); sendErr == nil {
						sent++
					}
				}
				getErr = ep.Direct().Get(1, 0, 0, buf[:8])
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if how == "stops" {
				var te *papers.TimeoutError
				if !errors.As(sendErr, &te) || te.Missing != 1<<1 {
					t.Fatalf("staging for a PE that stopped: %v, want a *TimeoutError naming PE 1", sendErr)
				}
				if getErr != nil {
					t.Errorf("a get of a stopped PE's memory: %v (there is nothing to wait for)", getErr)
				}
			} else {
				for _, e := range []error{sendErr, getErr} {
					if g := (*am.GoneError)(nil); !errors.As(e, &g) || g.PE != 1 {
						t.Errorf("staging for or getting from a PE that left: %v, want a *GoneError naming PE 1", e)
					}
				}
			}
			if handled != sent {
				t.Errorf("PE 1 handled %d of the %d payloads staged for it", handled, sent)
			}
		})
	}
}

// TestLastWordsHandled: a reply sent just before its sender leaves is
// handled by the PE waiting for it, not reported as the sender's
// departure — even when the departure is seen first. PE 0's wait is held,
// between a poll that found nothing and its look at PE 1, until PE 1 has
// replied and left.
func TestLastWordsHandled(t *testing.T) {
	var waitErr error
	release := make(chan struct{})
	err := run(t, 2, 20*time.Second, func(p *papers.PE, ep *am.Endpoint) error {
		c := newCounter(ep, false)
		if ep.Self() == 1 {
			<-release
			return ep.Request(0, c.hAck, am.Args{}) // and leave at once
		}
		start, calls, held := time.Now(), 0, false
		waitErr = ep.Wait("last words", 1, func() bool {
			calls++
			// Every second call follows a poll that found nothing; hold
			// one, once the wait has spun out, until PE 1 has gone.
			if calls%2 == 0 && !held && time.Since(start) > 100*time.Millisecond {
				held = true
				close(release)
				time.Sleep(200 * time.Millisecond)
			}
			return c.acks == 1
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if waitErr != nil {
		t.Errorf("waiting for a reply its sender sent before leaving: %v", waitErr)
	}
}
