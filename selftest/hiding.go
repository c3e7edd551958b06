package selftest

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/peset"
)

// A fault can hide another: with D6 stuck at 0 on one PE the barrier's
// AND of S0 is always 0, so D7 stuck at 1 on any PE changes no reading;
// with nAutoFd stuck at 0, nStrobe's level never shows. Readings that
// match one fault exactly then say nothing about such a second fault, and
// the report must say so rather than claim the one fault alone.

// maskBudget bounds the simulation one diagnosis spends looking for the
// faults its matches hide, in readings simulated (counted in whole probes,
// though most stop early): boards of up to 8 PEs are searched whole, of
// 16 for up to 8 matches, of 32 for one; beyond, the report warns without
// naming every fault.
const maskBudget = 20_000_000

// masked returns the faults that each of the matching hypotheses ms hides
// — other catalogue faults that, present with it, give exactly its
// readings — and whether the search was complete. Faults that read like a
// healthy board on their own are left out (the report lists them as not
// checkable), and so are faults on the matched line itself or contained
// in the match (a port whose data lines are undriven has them stuck at 1).
func (s *signatures) masked(h *hw.Netlist, pes []int, leds bool, ms []int) (hidden []hypothesis, complete bool) {
	complete = true
	budget := maskBudget
	seen := map[int]bool{}
	for _, m := range ms {
		e := s.hideEntry(m)
		if !e.done.Load() {
			cost := len(s.hyps) * len(s.healthy)
			if cost > budget {
				complete = false
				continue
			}
			budget -= cost
		}
		// Once per process: concurrent selftests with the same fault
		// wait for one search.
		e.once.Do(func() {
			e.hides = s.hiddenBy(h, pes, leds, m)
			e.done.Store(true)
		})
		for _, j := range e.hides {
			if !seen[j] {
				seen[j] = true
				hidden = append(hidden, s.hyps[j])
			}
		}
	}
	return hidden, complete
}

// hideEntry is the search for the faults hypothesis m hides.
type hideEntry struct {
	once  sync.Once
	done  atomic.Bool
	hides []int
}

func (s *signatures) hideEntry(m int) *hideEntry {
	s.hideMu.Lock()
	defer s.hideMu.Unlock()
	if s.hides == nil {
		s.hides = map[int]*hideEntry{}
	}
	e := s.hides[m]
	if e == nil {
		e = &hideEntry{}
		s.hides[m] = e
	}
	return e
}

// hiddenBy simulates every candidate fault together with hypothesis m (in
// parallel) and returns those that leave its readings unchanged.
func (s *signatures) hiddenBy(h *hw.Netlist, pes []int, leds bool, m int) []int {
	var todo []int
	for j, x := range s.hyps {
		if j != m && !sameLine(s.hyps[m], x) && distance(s.sigs[j], s.healthy) != 0 && !contains(s.hyps[m], x) {
			todo = append(todo, j)
		}
	}
	same := make([]bool, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for k := range next {
				sig, err := simulate(h, pes, leds, append(slices.Clone(s.hyps[m].faults), s.hyps[todo[k]].faults...), s.sigs[m])
				same[k] = err == nil && distance(sig, s.sigs[m]) == 0
			}
		})
	}
	for k := range todo {
		next <- k
	}
	close(next)
	wg.Wait()
	var hides []int
	for k, ok := range same {
		if ok {
			hides = append(hides, todo[k])
		}
	}
	return hides
}

// contains reports whether every fault of b is one of a's.
func contains(a, b hypothesis) bool {
	for _, f := range b.faults {
		if !slices.Contains(a.faults, f) {
			return false
		}
	}
	return true
}

// mayHide adds to a one-fault diagnosis the faults it could be hiding.
func mayHide(c *Check, hidden []hypothesis, complete bool) {
	if len(hidden) == 0 && complete {
		return
	}
	for _, x := range hidden {
		c.MayHide = append(c.MayHide, x.String())
	}
	c.Name += "; it may hide a second fault"
	if len(hidden) > 0 {
		c.Detail += fmt.Sprintf("; but they do not rule out a second fault behind it: with it present, faults on %s read the same as without", linesOf(hidden))
	}
	if !complete {
		c.Detail += "; on a board this size the search for faults it hides stopped early: assume it may hide others"
	}
	c.Detail += " — fix it and run selftest again to check those lines"
}

// linesOf names the lines of faults, each with its PEs: "D7 (PEs 0, 1),
// D6 (PE 2)"; an unplugged cable is "the cable".
func linesOf(hs []hypothesis) string {
	var order []string
	pes := map[string][]int{}
	for _, x := range hs {
		l := x.line
		if x.kind == "unplugged" {
			l = "the cable"
		}
		if _, ok := pes[l]; !ok {
			order = append(order, l)
		}
		if !slices.Contains(pes[l], x.pe) {
			pes[l] = append(pes[l], x.pe)
		}
	}
	parts := make([]string, len(order))
	for i, l := range order {
		ks := pes[l]
		slices.Sort(ks)
		parts[i] = fmt.Sprintf("%s (%s)", l, peset.Of(ks...))
	}
	return strings.Join(parts, ", ")
}
