// Package lpttest wraps an lpt.Port for tests and self-checks, as periph's
// gpiotest sits beside gpio: Counting counts the port operations a driver
// makes, and Lockstep makes the PEs of an in-process cluster take their
// operations in step, so that a count is the cost on an idle board
// whatever the scheduling.
package lpttest

import (
	"fmt"
	"sync/atomic"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Counting counts the register operations made through it. Close does
// not close the port under it: whoever opened that port closes it, so a
// driver that opens and closes its port per session can reuse one port.
type Counting struct {
	lpt.Port
	n atomic.Uint64
}

// NewCounting wraps p.
func NewCounting(p lpt.Port) *Counting { return &Counting{Port: p} }

func (c *Counting) WriteData(v uint8)    { c.n.Add(1); c.Port.WriteData(v) }
func (c *Counting) ReadData() uint8      { c.n.Add(1); return c.Port.ReadData() }
func (c *Counting) ReadStatus() uint8    { c.n.Add(1); return c.Port.ReadStatus() }
func (c *Counting) WriteControl(v uint8) { c.n.Add(1); c.Port.WriteControl(v) }
func (c *Counting) ReadControl() uint8   { c.n.Add(1); return c.Port.ReadControl() }

// Close leaves the port under it open.
func (c *Counting) Close() error { return nil }

// Ops returns the number of register operations so far.
func (c *Counting) Ops() uint64 { return c.n.Load() }

// Lockstep makes the PEs of a cluster that runs in one process take their
// port operations in lockstep while On is set: each PE's port calls Meet,
// a rendezvous of every PE, before each operation, so no PE starts its
// k-th operation before every PE has finished its (k-1)-th. Nobody is
// then ever late, and an operation's port-operation count is exactly its
// cost on an idle board. A failed Meet (a timeout, an abandoned cluster)
// ends the lockstep and is reported by Err.
//
// On is read by the PE that owns the port only: set it from that PE's
// goroutine.
type Lockstep struct {
	lpt.Port
	Meet func() error
	On   bool
	err  error
}

func (l *Lockstep) step() {
	if l.On && l.err == nil {
		l.err = l.Meet()
	}
}

func (l *Lockstep) WriteData(v uint8)    { l.step(); l.Port.WriteData(v) }
func (l *Lockstep) ReadData() uint8      { l.step(); return l.Port.ReadData() }
func (l *Lockstep) ReadStatus() uint8    { l.step(); return l.Port.ReadStatus() }
func (l *Lockstep) WriteControl(v uint8) { l.step(); l.Port.WriteControl(v) }
func (l *Lockstep) ReadControl() uint8   { l.step(); return l.Port.ReadControl() }

// ExplainStall passes the explanation of the port under it on, when that
// port has one (an emulated port knows who has not arrived).
func (l *Lockstep) ExplainStall() string {
	if x, ok := l.Port.(lpt.StallExplainer); ok {
		return x.ExplainStall()
	}
	return ""
}

// Err returns the failed rendezvous, if any, else the port's error.
func (l *Lockstep) Err() error {
	if l.err != nil {
		return fmt.Errorf("lockstep: %w", l.err)
	}
	return l.Port.Err()
}
