package am

import (
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// The board's roll call asks the data network too (papers.DataNet): after
// a timed-out barrier every PE waiting at it pings the others here and
// answers their pings while its roll call lasts, so a PE that does not
// answer is not waiting with them. The transport knows more of some: a PE
// that left (returned or failed) or went without leaving (died) is named
// so without a ping.

// rollID is the roll call's request handler; rollID+1 its reply's.
var rollID = Reserve(2)

// rollCall is an endpoint's roll call in progress.
type rollCall struct {
	seq      uint64    // this roll call's number, carried by its pings
	asked    peset.Set // the PEs asked
	toPing   peset.Set // those whose ping has not gone yet (their inbox was full)
	answered peset.Set // those that answered this roll call's ping
	known    []error   // what the transport said of each PE when asked (a *GoneError), by PE
	ping     Packet
}

func (e *Endpoint) installRollCall() {
	e.Install(rollID, func(m *Msg) {
		// A pinger that has gone since does not need the answer: no
		// error of the program's.
		if err := m.Reply(rollID+1, m.Args); err != nil && m.ep.err == err {
			m.ep.err = nil
		}
	})
	e.Install(rollID+1, func(m *Msg) {
		if r := &m.ep.roll; m.Args[0] == r.seq {
			r.answered |= 1 << m.Src
		}
	})
}

// Ask begins the data network's part of a roll call of the PEs in who
// (papers.DataNet): it notes those the transport knows are gone and pings
// the others.
func (e *Endpoint) Ask(who peset.Set) {
	r := &e.roll
	r.seq++
	r.asked, r.toPing, r.answered = who, 0, 0
	if r.known == nil {
		r.known = make([]error, e.n)
	}
	for k := range e.n {
		r.known[k] = nil
		if !who.Has(k) {
			continue
		}
		if err := e.t.Gone(k); err != nil {
			r.known[k] = err
			continue
		}
		r.toPing |= 1 << k
	}
	e.Listen()
}

// Listen sends the pings that have not gone and handles what has arrived:
// the others' pings, answered, and their answers. It never blocks; a
// handler's misuse is kept for the program's next poll.
func (e *Endpoint) Listen() {
	if e.cur != nil || e.closed {
		return
	}
	r := &e.roll
	for k := range e.n {
		if !r.toPing.Has(k) {
			continue
		}
		r.ping.Handler, r.ping.Net, r.ping.Len, r.ping.Staged = rollID, Left, 0, 0
		r.ping.Args = Args{r.seq}
		ok, err := e.t.Send(k, &r.ping)
		if err != nil {
			r.known[k] = err
		}
		if ok || err != nil {
			r.toPing &^= 1 << k
		}
	}
	// An error is the program's, for its next poll: keep it.
	err := e.flush()
	if _, perr := e.poll(PollBoth, true); err == nil {
		err = perr
	}
	if err != nil && e.err == nil {
		e.err = err
	}
}

// Lost returns the PEs of who that the transport already knows are gone
// (left, died, or cut off: a reset link, a frame that failed
// authentication), which a roll call would name without a ping.
func (e *Endpoint) Lost(who peset.Set) peset.Set {
	var lost peset.Set
	for k := range e.n {
		if who.Has(k) && e.t.Gone(k) != nil {
			lost |= 1 << k
		}
	}
	return lost
}

// Dead returns the PEs of who that the transport knows went without
// leaving: killed, or crashed (papers.DataNet). A board wait asks it
// while it waits; it allocates nothing while every PE of who is attached.
func (e *Endpoint) Dead(who peset.Set) peset.Set {
	if e.closed {
		return 0
	}
	var dead peset.Set
	for k := range e.n {
		if who.Has(k) {
			if g, ok := e.t.Gone(k).(*GoneError); ok && g.Died {
				dead |= 1 << k
			}
		}
	}
	return dead
}

// Absent ends the roll call: the PEs asked that did not answer, with what
// the transport knows of each.
func (e *Endpoint) Absent() []papers.Absence {
	r := &e.roll
	var out []papers.Absence
	for k := range e.n {
		if !r.asked.Has(k) || r.answered.Has(k) {
			continue
		}
		err := r.known[k]
		if err == nil && !e.closed {
			err = e.t.Gone(k) // a PE killed during the roll call
		}
		a := papers.Absence{PE: k, How: papers.Silent}
		if g, ok := err.(*GoneError); ok {
			a = g.Absence()
		} else if err != nil {
			a.How, a.Cause = papers.Failed, err.Error()
		}
		out = append(out, a)
	}
	r.asked = 0
	return out
}
