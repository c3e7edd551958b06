package selftest

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ttlpapers/ttlpapers/hw"
)

// pairCandidates is how many single faults, those that explain most of
// the readings, are tried as one of two faults at once.
const pairCandidates = 10

// diagnosePairs looks for two faults at once that give exactly the
// readings obs, when no single fault does. A whole search would simulate
// every pair of the catalogue (about 40,000 on 8 PEs); one of the two is
// taken instead from the single faults that explain the most readings
// (their own differences from a healthy board appear in obs), and paired
// with every other.
func (s *signatures) diagnosePairs(h *hw.Netlist, pes []int, leds bool, obs []uint8) [][2]hypothesis {
	var todo [][2]int
	seen := map[[2]int]bool{}
	for _, i := range s.explaining(obs) {
		for j := range s.hyps {
			if j != i && !seen[[2]int{j, i}] && !sameLine(s.hyps[i], s.hyps[j]) {
				seen[[2]int{i, j}] = true
				todo = append(todo, [2]int{i, j})
			}
		}
	}
	found := make([]bool, len(todo))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for k := range next {
				a, b := s.hyps[todo[k][0]], s.hyps[todo[k][1]]
				sig, err := simulate(h, pes, leds, append(slices.Clone(a.faults), b.faults...), obs)
				found[k] = err == nil && distance(sig, obs) == 0
			}
		})
	}
	for k := range todo {
		next <- k
	}
	close(next)
	wg.Wait()
	var pairs [][2]hypothesis
	for k, ok := range found {
		if ok {
			pairs = append(pairs, [2]hypothesis{s.hyps[todo[k][0]], s.hyps[todo[k][1]]})
		}
	}
	return pairs
}

// explaining returns the indexes of the single faults whose differences
// from a healthy board best agree with obs: readings they change as obs
// shows them, less readings they change otherwise.
func (s *signatures) explaining(obs []uint8) []int {
	type scored struct{ i, score int }
	var c []scored
	for i, sig := range s.sigs {
		score := 0
		for p := range sig {
			switch {
			case sig[p] == s.healthy[p]:
			case sig[p] == obs[p]:
				score++
			default:
				score--
			}
		}
		if score > 0 {
			c = append(c, scored{i, score})
		}
	}
	slices.SortStableFunc(c, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	var out []int
	for _, x := range c[:min(len(c), pairCandidates)] {
		out = append(out, x.i)
	}
	return out
}

// sameLine: two faults on one line of one PE cannot both be there.
func sameLine(a, b hypothesis) bool { return a.pe == b.pe && a.line == b.line }

// pairFinding is the failed check for two faults at once.
func pairFinding(h *hw.Netlist, pairs [][2]hypothesis) Check {
	c := Check{Status: StatusFail}
	var names, lines, chips, causes []string
	for _, p := range pairs {
		names = append(names, p[0].String()+" and "+p[1].String())
		for _, x := range p {
			f := finding(h, []hypothesis{x}, true)
			if !slices.Contains(lines, f.Line) {
				lines = append(lines, f.Line)
				if f.Pin > 0 {
					c.Lines, c.Pins = append(c.Lines, f.Line), append(c.Pins, f.Pin)
				}
			}
			if !slices.Contains(chips, f.Chip) {
				chips = append(chips, f.Chip)
			}
			if cause := f.Line + ": " + f.Cause; !slices.Contains(causes, cause) {
				causes = append(causes, cause)
			}
			if !slices.Contains(c.PEs, x.pe) {
				c.PEs = append(c.PEs, x.pe)
			}
			c.Suspects = append(c.Suspects, x.String())
		}
	}
	slices.Sort(c.PEs)
	c.Line, c.Chip, c.Cause = strings.Join(lines, " and "), strings.Join(chips, "; "), strings.Join(causes, "; ")
	if len(c.Pins) > 0 {
		c.Pin = c.Pins[0]
	}
	c.Name = "diagnosis: two faults at once: " + names[0]
	if len(names) > 1 {
		c.Name = "diagnosis: two faults at once, one of: " + strings.Join(names, "; ")
	}
	c.Detail = fmt.Sprintf("no single fault gives these readings; %s together give exactly them", strings.Join(names, ", or "))
	return c
}
