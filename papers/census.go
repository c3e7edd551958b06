package papers

import "github.com/ttlpapers/ttlpapers/lpt"

// The census (docs/protocol.md, "The census"): a PE whose cable is pulled
// or whose port goes transparent without announcing itself reads as all
// ones, the NAND's identity, so barriers pass without it and the
// collectives combine the others only. Every so many calls of the public
// API, and after every gather, the participants vote "I am here"; a
// participant missing from the vote is named on every PE that voted.
//
// The census must start on every PE at the same point of the program, so
// it is keyed to what the SPMD contract makes every PE do alike: the calls
// of the exported collectives, counted once at their entry (a collective
// built on others counts once; depth says how deep the PE is in them).

// DefaultCensusEvery is Config.CensusEvery's default: one census (one
// vote, ceil(n/4) NANDs) per 64 calls of the collectives adds about 3% of
// a barrier per call, below what BenchmarkCensus can tell from noise, and
// names an unplugged PE within 64 calls (docs/spmd.md, "Faults on a real
// board").
const DefaultCensusEvery = 64

// begin is the entry of every exported collective: every censusEvery-th
// call it runs a census first (see due). Every exported collective calls it
// first and defers end.
func (p *PE) begin(op string) error {
	if p.due(op) {
		return p.census(op, p.ops-1) // before the call: it is not proven yet
	}
	return nil
}

// due counts a call of a collective, unless it is inside another, and
// reports whether a census is due before it. The Count forms (ReduceCount
// …) call it instead of begin: their vote of who is here stands in for the
// census, and they report the missing instead of failing.
func (p *PE) due(op string) bool {
	p.depth++
	if p.depth > 1 {
		return false
	}
	p.outer = op
	p.ops++
	if p.censusEvery <= 0 {
		return false
	}
	p.calls++
	return p.calls%uint64(p.censusEvery) == 0
}

// end closes begin, with the call's error: with Config.Verify, the
// outermost call that succeeded proves its result before it returns it.
func (p *PE) end(err *error) {
	if p.depth--; p.depth == 0 && p.verify && *err == nil {
		*err = p.prove(p.outer, p.ops)
	}
}

// census has every participant vote "I am here" and fails, on every PE that
// voted, with an *AbsentError naming the participants missing from the vote
// and the calls whose results may lack them: those after proven, the calls
// the last census vouched for
// (their ports read transparent: unplugged, switched off, or released
// without leaving). They are dropped from the participants, so a program
// that goes on does so knowingly, as after a departure. A PE that cannot
// run an operation (closed, left) takes no census: the operation says why
// it cannot run; nor does one on an engine, which finds its dead PEs itself.
func (p *PE) census(op string, proven uint64) error {
	if p.eng != nil || p.state != running || p.members&(1<<p.self) == 0 {
		return nil
	}
	// Stats count the program's operations: the census's own are
	// counted as Censuses only.
	saved, data := p.stats, p.last&lpt.DataMask
	here, err := p.vote("census", true) // a constant name: the census allocates nothing
	p.stats.Barriers, p.stats.NANDs = saved.Barriers, saved.NANDs
	if err != nil {
		return err
	}
	// The program's data lines (SetData, for a split-phase barrier's
	// NAND) are back as it set them: every PE has read the vote's NAND.
	if p.last&lpt.DataMask != data {
		p.last = p.last&^lpt.DataMask | data
		p.port.WriteData(p.last)
	}
	p.stats.Censuses++
	if missing := p.members &^ here; missing != 0 {
		p.members &^= missing
		return &AbsentError{PE: p.self, Op: op, Missing: missing, Why: "participant", Proven: p.proven, Calls: proven}
	}
	p.proven = proven
	return nil
}

// Census runs a census now, whatever Config.CensusEvery says, for a program
// that wants one at a point of its own — before it prints its result, say.
// Every PE must call it at the same point, as any collective.
func (p *PE) Census() error {
	if err := p.usable("Census"); err != nil {
		return err
	}
	return p.census("Census", p.ops)
}
