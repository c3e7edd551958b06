// Package port registers the spmd driver of a real TTL_PAPERS board through
// a printer port or GPIO pins: every port spec package lpt/backend opens
// (port:0x378, ppdev:/dev/parport0, devport:0x378, gpio:…, and the short
// forms it accepts). It is the Default driver, so a spec with no other
// driver's name comes here.
//
// A PE that fails announces it (papers.PE.Abort with substrate.AbortCode), so
// every other PE's current or next operation returns an
// *papers.InterruptError naming it; a PE stopped by a signal does the same
// from the signal handler, on the raw port, which it first takes from the
// PE's goroutine. A PE whose program returns announces that too
// (papers.PE.Finish), so that one returning while the others compute is
// named as such.
package port

import (
	"errors"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/substrate"
)

func init() {
	for _, name := range []string{substrate.Default, "ppdev", "devport", "gpio"} {
		substrate.Register(name, portDriver{})
	}
}

type portDriver struct{}

func (portDriver) Check(spec string) error { return backend.Check(spec) }

func (portDriver) Open(spec string, o substrate.Options) (substrate.Session, error) {
	l, err := listenDataNet(o)
	if err != nil {
		return nil, err
	}
	raw, err := backend.Open(spec)
	if err != nil {
		l.Close()
		return nil, err
	}
	g := &guardedPort{Port: raw, timeout: o.Timeout}
	p, err := papers.Open(g, papers.Config{PE: o.PE, PEs: o.PEs, Timeout: o.Timeout, CheckInTimeout: o.CheckIn, Tag: o.Tag, Context: o.Context, Verify: o.Verify})
	if err != nil {
		l.Close()
		return nil, err
	}
	return joinDataNet(&session{p: p, port: g}, l, o)
}

type session struct {
	p    *papers.PE
	port *guardedPort
}

func (s *session) PE() *papers.PE { return s.p }

// Close ends the PE as a program that returned: papers.PE.Finish, which
// at a normal end is the PEs' last barrier together.
func (s *session) Close() error { return s.p.Finish() }
func (s *session) Stop()        { s.port.stop() }

// Fail announces the departure (papers.PE.Abort, bounded by the PE's
// timeout; when the others do not acknowledge it leaves the port stalling
// every barrier). On a port that has failed it stalls at once, and after
// a wait that timed out too: the PE that did not answer would not
// acknowledge the announcement either, and every other PE waiting for it
// times out by itself, so announcing would only keep them another timeout.
func (s *session) Fail(err error) {
	var te *papers.TimeoutError
	if s.port.Err() != nil || errors.As(err, &te) {
		stall(s.port.Port, false, 0)
		return
	}
	s.p.Abort(substrate.AbortCode)
}

// guardedPort is a real port whose writes the signal handler can stop for
// good. Without it, a write the PE's goroutine makes between the handler's
// stall and the process's exit would be the port's last value, and could
// show the others a PE that is alive and at their barrier.
type guardedPort struct {
	lpt.Port
	timeout time.Duration // the program's bound on a wait (0: papers.DefaultTimeout)
	mu      sync.Mutex
	stopped bool
}

func (g *guardedPort) WriteData(v uint8) {
	g.mu.Lock()
	if !g.stopped {
		g.Port.WriteData(v)
	}
	g.mu.Unlock()
}

func (g *guardedPort) WriteControl(v uint8) {
	g.mu.Lock()
	if !g.stopped {
		g.Port.WriteControl(v)
	}
	g.mu.Unlock()
}

// stop ends the PE's part on the port (stall: announced through the
// interrupt) and drops every later write.
func (g *guardedPort) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		stall(g.Port, true, g.timeout)
		g.stopped = true
	}
}

// stall ends this PE's part on a real port without its *papers.PE. With
// raise (the signal handler, which has taken the port from the PE's
// goroutine), it announces the departure as Fail does (papers.Abandon with
// AbortCode, bounded by the program's wait timeout: the others name this
// PE as soon as they reach a barrier). Without raise, or when the others do
// not acknowledge, it holds both strobes low (every barrier stalls) with
// the LED red and P_NAK low (acknowledging interrupts forever, so it never
// blocks the others' acknowledge), and leaves the port so: a dead PE must
// not look transparent unless the others were told.
func stall(port lpt.Port, raise bool, timeout time.Duration) {
	if raise && papers.Abandon(port, substrate.AbortCode, timeout) == nil {
		return
	}
	// The data lines stay as they are: after a timed-out barrier they
	// answer the others' roll call (papers.TimeoutError), which may not be
	// over yet.
	port.WriteData(lpt.LR | port.ReadData()&lpt.DataMask)
	port.WriteControl(0)
}
