package splitc

import (
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/peset"
)

// storeWait bounds AllStoreSync's rounds. The board keeps every PE in
// those rounds even when a PE's link to the data network is down (it is
// still on the board, so every sum completes), so the wait ends when the
// sum of the stores in flight has not moved for the data network's
// timeout: then no store is arriving, and waiting longer only hangs.
type storeWait struct {
	timeout time.Duration
	start   time.Time // AllStoreSync's call
	sum     int64     // the sum last seen
	since   time.Time // when it was first seen
	asked   time.Time // when this PE pinged the others in this stall; zero before
}

// pingFor is how long a PE listens for the others' answers to its pings
// before it names those that did not answer: every PE polls between its
// rounds, so a quarter of the timeout (at most 500 ms) is long for an
// answer.
func (w *storeWait) pingFor() time.Duration { return min(w.timeout/4, 500*time.Millisecond) }

// check is called after each round whose sum is not zero. Every PE's
// clock differs, so the PEs decide together, by Any, at the same round:
// when one has waited out the timeout, or its data network already knows
// a PE is gone (a reset link, a forged frame: what it sent since will not
// come). A PE pings the others pingFor before its timeout, so that when
// the PEs end at the timeout the answers are in (storesTimedOut).
func (w *storeWait) check(m *Memory, sum int64) error {
	now := time.Now()
	if w.since.IsZero() || sum != w.sum {
		w.sum, w.since, w.asked = sum, now, time.Time{}
	}
	others := (peset.Set(1)<<m.n - 1) &^ peset.Of(m.self)
	stalled := now.Sub(w.since)
	if w.asked.IsZero() && stalled > w.timeout-w.pingFor() {
		m.ep.Ask(others)
		w.asked = now
	} else if !w.asked.IsZero() {
		m.ep.Listen()
	}
	lost := m.ep.Lost(others)
	over, err := m.p.Any(stalled > w.timeout || lost != 0)
	if err != nil || !over {
		return err
	}
	return w.end(m, sum, lost)
}

// end is every PE's end of the wait, at the same round: with a
// *LostError when some PE's data network knew PEs gone (the PEs learn
// which, and whose network knew, from the board), else with
// storesTimedOut's *papers.TimeoutError.
func (w *storeWait) end(m *Memory, sum int64, lost peset.Set) error {
	all, err := lostOver(m.p, m.n, lost)
	if err != nil {
		return err
	}
	if all == 0 {
		return w.storesTimedOut(m, sum)
	}
	finders, err := m.p.Vote(lost != 0)
	if err != nil {
		return err
	}
	e := &LostError{PE: m.self, Lost: all, FoundBy: finders, Pending: sum, After: time.Since(w.start)}
	if lost != 0 {
		m.ep.Ask(lost) // every PE of lost is known gone: no ping, only its account
		e.DataNet = m.ep.Absent()
	}
	return e
}

// lostOver is the OR over the PEs of the PEs their data networks know
// gone (in a byte up to 8 PEs: fewer NANDs).
func lostOver(p *papers.PE, n int, lost peset.Set) (peset.Set, error) {
	if n <= 8 {
		all, err := papers.OR(p, uint8(lost))
		return peset.Set(all), err
	}
	all, err := papers.OR(p, uint32(lost))
	return peset.Set(all), err
}

// storesTimedOut ends the roll call begun before the timeout (or begins
// one now, if this PE had not pinged yet: it ended at another's timeout)
// and returns the *papers.TimeoutError naming the PEs that did not
// answer: a PE whose link is down, stopped, or gone. So a PE is named
// within the timeout of the last store that arrived, and the rounds'
// time. Every PE listens until the last to ping has listened pingFor
// (agreed in 2 ms steps: a byte holds the 500 ms): a PE that pinged only
// now must have its answers before the others leave, or it would name
// them.
func (w *storeWait) storesTimedOut(m *Memory, sum int64) error {
	others := (peset.Set(1)<<m.n - 1) &^ peset.Of(m.self)
	if w.asked.IsZero() {
		m.ep.Ask(others)
		w.asked = time.Now()
	}
	const step = 2 * time.Millisecond
	rest := min(max(time.Until(w.asked.Add(w.pingFor())), 0), w.pingFor())
	steps, err := papers.Reduce(m.p, papers.Max, uint8((rest+step-1)/step))
	if err != nil {
		return err
	}
	for end := time.Now().Add(time.Duration(steps) * step); time.Now().Before(end); {
		m.ep.Listen()
		time.Sleep(50 * time.Microsecond)
	}
	abs := m.ep.Absent()
	e := &papers.TimeoutError{PE: m.self, Op: "all_store_sync", Waited: time.Since(w.since), DataNet: abs,
		Stall: fmt.Sprintf("%d bytes stored have not arrived, and the count has not moved", sum)}
	for _, a := range abs {
		e.Missing |= 1 << a.PE
	}
	if len(abs) == 0 {
		e.Stall += "; every PE answers the data network"
	}
	return e
}

// LostError is AllStoreSync's end before its timeout: when the PEs
// decided, some PE's data network already knew PEs were gone (a
// connection reset or ended without a departure, a frame that failed
// authentication, a PE that left), so stores to or from them may never
// arrive. Every PE returns one, with the same Lost and FoundBy.
type LostError struct {
	PE      int       // the PE returning it
	Lost    peset.Set // the PEs the finders' data networks knew gone (this PE may be one)
	FoundBy peset.Set // the PEs whose data network knew it
	// DataNet is this PE's data network's account of each PE it knew
	// gone (how it went, and why); empty when only others knew.
	DataNet []papers.Absence
	Pending int64         // the bytes stored, over every PE, that had not arrived
	After   time.Duration // from the call of AllStoreSync to the PEs' decision
}

func (e *LostError) Error() string {
	s := fmt.Sprintf("splitc: PE %d: all_store_sync ended after %v, before its timeout: the data network of %s found %s gone",
		e.PE, e.After.Round(10*time.Microsecond), e.FoundBy, e.Lost)
	if e.Lost.Has(e.PE) {
		s += "; this PE is among them: the others cannot reach it"
	}
	for _, a := range e.DataNet {
		s += "; " + a.String()
	}
	return s + fmt.Sprintf("; %d bytes stored had not arrived, and what was sent since will not", e.Pending)
}

// LostPEs are the operation and the PEs the error names, for a failing
// PE's report.
func (e *LostError) LostPEs() (op string, lost peset.Set) { return "all_store_sync", e.Lost }

// ErrorPE is the PE the error is about.
func (e *LostError) ErrorPE() int { return e.PE }
