package papers

import (
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// Proving the run (docs/protocol.md, "Proving the run"): a PE unplugged
// or a data line stuck after check-in gives results without the PE's
// values, and no operation fails. So no PE ends with success before the
// PEs have proved the board whole: Finish, when every participant ends in
// its acknowledge, takes a census and tests every data line, and fails on
// every PE alike when either finds a fault, naming it and the calls whose
// results may lack it. With Config.Verify every collective takes the same
// proof before it returns (end).

// serveNap is the longest a wait of Finish's blocks on the port between
// two looks at the data network: a PE that returned answers the others'
// reads of its global memory within it while they go on (spmd's
// end-together rule).
const serveNap = 200 * time.Microsecond

// endOp names the proof Finish takes at the end of a run.
const endOp = "end of run"

// prove takes a census of the participants, then tests every data line
// with n+1 NANDs (testLines, as check-in does). proven is the number of
// calls of the collectives whose results it vouches for: every call made
// so far.
// Like the census it counts as a census in Stats and puts the program's
// data lines back.
func (p *PE) prove(op string, proven uint64) error {
	if p.eng != nil || p.state != running || p.members&(1<<p.self) == 0 {
		return nil
	}
	if err := p.census(op, proven); err != nil {
		return err
	}
	saved, data := p.stats, p.last&lpt.DataMask
	err := p.testLines(op, proven)
	p.stats.Barriers, p.stats.NANDs = saved.Barriers, saved.NANDs
	if err != nil {
		return err
	}
	p.linesOK = proven
	if p.last&lpt.DataMask != data {
		p.last = p.last&^lpt.DataMask | data
		p.port.WriteData(p.last)
	}
	return nil
}

// ended is what Finish does once its acknowledge is over with code: every
// participant ended in it (p.state is still running) and the run is
// proved, or the run did not end together and Finish says why.
func (p *PE) ended(code uint8, stayed peset.Set, err error) error {
	switch {
	case err != nil:
		return p.errorf("%s: %w; the run is not proven: every PE must return within the timeout (PAPERS_TIMEOUT, -papers.timeout) of the others", endOp, err)
	case stayed != 0:
		// They went on computing, told of this return as this PE is.
		return &InterruptError{PE: p.self, Op: endOp, Code: code, Left: 1 << p.self, Returned: 1 << p.self, Members: stayed}
	case p.state != running:
		return nil // left before (Leave): Finish is Close
	case code != ReturnCode:
		// A PE aborting as the others return: the codes OR.
		return p.errorf("%s: a PE failed as the others returned (interrupt code %#x, not %#x): its own error says why", endOp, code, ReturnCode)
	}
	return p.prove(endOp, p.ops)
}
