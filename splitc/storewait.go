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
	sum     int64     // the sum last seen
	since   time.Time // when it was first seen
}

// check is called after each round whose sum is not zero. Every PE's
// clock differs, so the PEs decide together, by Any, at the same round:
// when one has waited out the timeout, or its data network already knows
// a PE is gone (a reset link, a forged frame: what it sent since will not
// come), all end, each naming the PEs its data network cannot reach
// (storesLost).
func (w *storeWait) check(m *Memory, sum int64) error {
	now := time.Now()
	if w.since.IsZero() || sum != w.sum {
		w.sum, w.since = sum, now
	}
	others := (peset.Set(1)<<m.n - 1) &^ peset.Of(m.self)
	over, err := m.p.Any(now.Sub(w.since) > w.timeout || m.ep.Lost(others) != 0)
	if err != nil || !over {
		return err
	}
	return storesLost(m, sum, now.Sub(w.since))
}

// storesLost asks the data network which PEs do not answer, as a
// timed-out barrier's roll call does (every PE asks at the same round, so
// each answers the others' pings meanwhile), and returns the
// *papers.TimeoutError naming them: a PE whose link is down, stopped, or
// gone. Every PE listens at once, so a quarter of the timeout (at most
// 500 ms) is long for an answer, and a PE is named within 1.25 times the
// timeout of the last store that arrived (1.05 at the default 10 s).
func storesLost(m *Memory, sum int64, waited time.Duration) error {
	others := (peset.Set(1)<<m.n - 1) &^ peset.Of(m.self)
	m.ep.Ask(others)
	for end := time.Now().Add(min(m.ep.Timeout()/4, 500*time.Millisecond)); time.Now().Before(end); {
		m.ep.Listen()
		time.Sleep(50 * time.Microsecond)
	}
	abs := m.ep.Absent()
	e := &papers.TimeoutError{PE: m.self, Op: "all_store_sync", Waited: waited, DataNet: abs,
		Stall: fmt.Sprintf("%d bytes stored have not arrived, and the count has not moved", sum)}
	for _, a := range abs {
		e.Missing |= 1 << a.PE
	}
	if len(abs) == 0 {
		e.Stall += "; every PE answers the data network"
	}
	return e
}
