package emu

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// staller stages a PE stopped at one point of the code: the first time PE
// pe reaches it, that goroutine blocks until released, as a process under
// SIGSTOP would.
type staller struct {
	pe      int
	at      pausePoint
	stopped chan struct{} // closed when the PE stops there
	resume  chan struct{}
	once    sync.Once
}

func stall(t *testing.T, pe int, at pausePoint) *staller {
	s := &staller{pe: pe, at: at, stopped: make(chan struct{}), resume: make(chan struct{})}
	pause = func(k int, p pausePoint) {
		if k == s.pe && p == s.at {
			s.once.Do(func() {
				close(s.stopped)
				<-s.resume
			})
		}
	}
	t.Cleanup(func() { pause = nil })
	return s
}

// newBoard is New(pes), locked (as New makes it) or lock-free (as a shared
// board is): the lock-free protocol's PEs can be staged stopped anywhere.
func newBoard(t *testing.T, pes int, locked bool) *Board {
	t.Helper()
	size, err := hw.SizeFor(pes)
	if err != nil {
		t.Fatal(err)
	}
	return newInProcess(hw.MustNew(size), pes, locked, nil)
}

// eachMode runs f on a locked and on a lock-free board's protocol.
func eachMode(t *testing.T, f func(t *testing.T, locked bool)) {
	for _, locked := range []bool{true, false} {
		t.Run(map[bool]string{true: "locked", false: "lock-free"}[locked], func(t *testing.T) { f(t, locked) })
	}
}

// barrierPorts claims every port of a 3-PE board and puts all at S1.
func barrierPorts(t *testing.T, locked bool) (*Board, []*Port) {
	b := newBoard(t, 3, locked)
	ps := claimAll(t, b)
	for _, p := range ps {
		p.WriteData(lpt.S1)
	}
	return b, ps
}

// ready reports whether status shows the S0 barrier complete.
func readyS0(status uint8) bool { return status&lpt.RDY != 0 }

// pollReadyS0 polls p's status as the driver does until it shows the S0
// barrier complete, for at most two full looks' worth of reads: a write
// stored but not committed (its writer stopped) is seen by a full look.
func pollReadyS0(p *Port) (st uint8, ok bool) {
	for range 2 * fullLookEvery {
		if st = p.ReadStatus(); readyS0(st) {
			return st, true
		}
	}
	return st, false
}

// TestStoppedAfterStore: a PE stopped between publishing its write and
// evaluating the board holds nobody up — its write is on the board, and
// the others evaluate it themselves.
func TestStoppedAfterStore(t *testing.T) {
	_, ps := barrierPorts(t, false)
	s := stall(t, 2, afterStore)
	ps[0].WriteData(lpt.S0)
	ps[1].WriteData(lpt.S0)
	done := make(chan struct{})
	go func() { ps[2].WriteData(lpt.S0); close(done) }() // arrives last, then stops
	<-s.stopped
	for k := 0; k < 2; k++ {
		if st, ok := pollReadyS0(ps[k]); !ok {
			t.Errorf("PE %d: status %#02x: the barrier did not complete while PE 2 was stopped after its write", k, st)
		}
	}
	close(s.resume)
	<-done
}

// TestStoppedBeforeCommit: a PE stopped with a new state computed but not
// committed holds nobody up, and when it resumes its stale state is
// thrown away, not committed over the newer one.
func TestStoppedBeforeCommit(t *testing.T) {
	b, ps := barrierPorts(t, false)
	s := stall(t, 2, beforeCommit)
	ps[0].WriteData(lpt.S0)
	ps[1].WriteData(lpt.S0)
	done := make(chan struct{})
	go func() { ps[2].WriteData(lpt.S0); close(done) }()
	<-s.stopped
	if st, ok := pollReadyS0(ps[0]); !ok {
		t.Fatalf("PE 0: status %#02x: the barrier did not complete while PE 2 was stopped before committing", st)
	}
	// The others move on to the next barrier (S1) meanwhile.
	ps[0].WriteData(lpt.S1)
	ps[1].WriteData(lpt.S1)
	close(s.resume)
	<-done
	if q, _ := b.NetLevel(hw.NetRDYQ); q {
		t.Error("RDYQ high: PE 2's stale state overwrote the newer one")
	}
	ps[2].WriteData(lpt.S1)
	for k, p := range ps {
		if st := p.ReadStatus(); readyS0(st) {
			t.Errorf("PE %d: the S1 barrier did not complete after PE 2 resumed (status %#02x)", k, st)
		}
	}
}

// TestStaleCommitRefused: a PE stopped with a state computed from an old
// snapshot must not commit it when it resumes: here its state predates an
// interrupt's rising edge, which the others committed meanwhile, so
// committing it would lose the interrupt.
func TestStaleCommitRefused(t *testing.T) {
	b, ps := barrierPorts(t, false)
	for _, p := range ps {
		p.WriteControl(lpt.NAK)
	}
	s := stall(t, 2, beforeCommit)
	done := make(chan struct{})
	go func() { ps[2].WriteData(lpt.S1 | 0x5); close(done) }()
	<-s.stopped
	ps[0].WriteControl(lpt.NAK | lpt.IRQ) // the interrupt flag latches
	if v, _ := b.NetLevel(hw.NetINTQ); v {
		t.Fatal("the raise did not latch the interrupt flag")
	}
	newer := b.m.load(hDFF)
	close(s.resume)
	<-done
	if w := b.m.load(hDFF); dffT(w) < dffT(newer) {
		t.Errorf("the flip-flop word went back from T=%d to T=%d: PE 2 committed its stale state", dffT(newer), dffT(w))
	}
	if v, _ := b.NetLevel(hw.NetINTQ); v {
		t.Error("the interrupt flag was cleared: PE 2 committed the state it had computed before the raise")
	}
}

// TestStoppedBeforeWaking: a PE stopped after committing the state that
// completes a barrier, before waking the sleepers, delays a sleeper by the
// sleep bound at most: the sleeper then looks itself.
func TestStoppedBeforeWaking(t *testing.T) {
	_, ps := barrierPorts(t, false)
	s := stall(t, 2, afterCommit)
	ps[0].WriteData(lpt.S0)
	ps[1].WriteData(lpt.S0)
	st := ps[0].ReadStatus()
	woke := make(chan uint8)
	go func() {
		// As the driver waits: each Wait blocks a few milliseconds at most.
		for !ps[0].Wait(st, lpt.RDY, time.Minute, nil) {
		}
		woke <- ps[0].ReadStatus()
	}()
	waitFor(t, 10*time.Second, "PE 0 to sleep", func() bool { return sleeping(ps[0]) })
	done := make(chan struct{})
	go func() { ps[2].WriteData(lpt.S0); close(done) }()
	defer func() { <-done }()
	select {
	case <-s.stopped: // PE 2 committed and stopped before waking anyone
	case st := <-woke: // PE 0 woke first and found the write itself
		if !readyS0(st) {
			t.Errorf("PE 0's wait ended with status %#02x, not ready", st)
		}
		close(s.resume)
		return
	}
	select {
	case st := <-woke:
		if !readyS0(st) {
			t.Errorf("PE 0's wait ended with status %#02x, not ready", st)
		}
	case <-time.After(30 * time.Second): // a hang, not a slow machine
		t.Error("PE 0 slept on while the PE that should wake it was stopped")
	}
	close(s.resume)
}

func sleeping(p *Port) bool {
	return p.b.sleeping()&(1<<p.pe) != 0
}

// TestContendedLine: two enabled drivers that disagree pull their net low
// (a TTL low sinks more than a high sources), and Contention counts the
// net once per settle that leaves it contended. The board here is
// miswired on purpose: PE 1's two Busy buffers both enable on P_SEL=0.
func TestContendedLine(t *testing.T) { eachMode(t, testContendedLine) }

func testContendedLine(t *testing.T, locked bool) {
	b := newBoard(t, 4, locked)
	busy := hw.CableNet(1, "Busy")
	for gi := range b.gates {
		g := &b.gates[gi]
		if g.Fn == hw.FuncBuffer && b.nets[b.drivers[g.Out].Net].Name == busy && !g.EnLow {
			g.EnLow = true
		}
	}
	b.start(b.Job(), nil) // on the miswired circuit
	ps := claimAll(t, b)
	for _, p := range ps {
		p.WriteControl(lpt.NAK) // nobody acknowledges: the interrupt flag may rise
	}
	before := b.Contention()
	// RDYQ low (power-up), nINTQ high (no interrupt): the buffers disagree.
	if v, _ := b.NetLevel(busy); v || before == 0 {
		t.Fatalf("Busy with RDYQ=0 and nINTQ=1 both driving: level %v, contention %d; want low and counted", v, before)
	}
	ps[0].WriteData(lpt.LG | lpt.S1) // a settle that leaves it contended
	ps[0].WriteData(lpt.LR | lpt.S1) // LED only: no settle
	if got := b.Contention(); got != before+1 {
		t.Errorf("one settle that left PE 1's Busy contended: contention went from %d to %d, want +1", before, got)
	}
	// All at S1: RDYQ goes high and agrees with nINTQ: no contention.
	for _, p := range ps {
		p.WriteData(lpt.S1)
	}
	mid := b.Contention()
	ps[2].WriteData(lpt.S1 | 0x3)
	if v, _ := b.NetLevel(busy); !v || b.Contention() != mid {
		t.Errorf("drivers agreeing (both high): Busy %v, contention %d → %d; want high and no count", v, mid, b.Contention())
	}
	// An interrupt: nINTQ falls, RDYQ stays high: they fight again.
	ps[3].WriteControl(lpt.NAK | lpt.IRQ)
	if v, _ := b.NetLevel(busy); v || b.Contention() != mid+1 {
		t.Errorf("after the interrupt: Busy %v, contention %d → %d; want low and one count", v, mid, b.Contention())
	}
}

func claimAll(t *testing.T, b *Board) []*Port {
	t.Helper()
	var ps []*Port
	for k := 0; k < b.PEs(); k++ {
		p, err := b.Port(k)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// TestWakeUps: a writer wakes a sleeping PE when its commit changes what
// the PE waits for — here a raised interrupt, which the status does not
// show with P_SEL=0 — and leaves it asleep when it changes something else
// (another PE's NAND data).
func TestWakeUps(t *testing.T) { eachMode(t, testWakeUps) }

func testWakeUps(t *testing.T, locked bool) {
	b := newBoard(t, 3, locked)
	ps := claimAll(t, b)
	for _, p := range ps {
		p.WriteControl(lpt.NAK)
		p.WriteData(lpt.S1 | 0xf)
	}
	ps[0].WriteData(lpt.S0 | 0xf) // waits for the S0 barrier
	st := ps[0].ReadStatus()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !ps[0].Wait(st, lpt.RDY, time.Minute, nil) {
		}
	}()
	waitFor(t, 10*time.Second, "PE 0 to sleep", func() bool { return sleeping(ps[0]) })
	ps[1].WriteData(lpt.S1 | 0x3) // NAND data only: not what PE 0 waits for
	if !sleeping(ps[0]) {
		select {
		case <-done:
			t.Fatal("PE 0's wait ended on a write that changed nothing it waits for")
		default: // it woke from its own timeout and sleeps again
		}
	}
	ps[2].WriteControl(lpt.NAK | lpt.IRQ) // raise: a flip-flop changes
	if sleeping(ps[0]) {
		t.Error("the raise did not wake PE 0 (it is still registered as sleeping)")
	}
	<-done
}

// TestPublishNeverGoesBack: a committer descheduled between its commit and
// its publication cannot put back its older statuses over a newer
// committer's, and a port adopts only statuses published for the flip-flop
// word it reads.
func TestPublishNeverGoesBack(t *testing.T) {
	b, ps := barrierPorts(t, false)
	ps[0].WriteData(lpt.S0)
	stale := newSim(b, -1)
	b.evaluate(stale) // commits nothing: the board is settled
	oldT := stale.t
	ps[1].WriteData(lpt.S0)
	ps[2].WriteData(lpt.S0) // completes the barrier: a newer T
	w := b.m.load(hDFF)
	published := b.m.load(hStatus)
	if published>>pubShift != dffT(w) || dffT(w) <= oldT {
		t.Fatalf("published T %d, flip-flop word T %d, stale T %d: want the word's T, newer than the stale one", published>>pubShift, dffT(w), oldT)
	}
	b.publish(stale.out, stale.q(), oldT)
	if got := b.m.load(hStatus); got != published {
		t.Errorf("a stale publication replaced %#x by %#x", published, got)
	}
	for k, p := range ps[:3] { // the plugged ones
		pub := pubStatus(b.m.load(hStatus+k/pubPerWord), k)
		if st := p.ReadStatus(); !readyS0(st) || st != pub {
			t.Errorf("PE %d: status %#02x, published %#02x: want the completed barrier", k, st, pub)
		}
	}
	// A word published for another T is not adopted.
	b.m.store(hStatus, (dffT(w)-1)<<pubShift)
	if ps[0].adopt(w) {
		t.Error("port adopted statuses published for an older flip-flop word")
	}
}

// TestWaitDone: a sleeping PE whose done channel closes ends its wait
// reporting it (in-process a goroutine of the port's watches the channel,
// so the sleep itself is a plain receive), and a port closed while its
// done channel stays open ends its watcher (the package's leak check
// fails otherwise).
func TestWaitDone(t *testing.T) { eachMode(t, testWaitDone) }

func testWaitDone(t *testing.T, locked bool) {
	_, ps := barrierPorts(t, locked)
	ps[0].WriteData(lpt.S0)
	st := ps[0].ReadStatus()
	done, never := make(chan struct{}), make(chan struct{})
	ended := make(chan bool, 1)
	go func() {
		// As the driver waits: each Wait blocks a few milliseconds at most.
		for !ps[0].Wait(st, lpt.RDY, time.Minute, done) {
		}
		ended <- true
	}()
	waitFor(t, 10*time.Second, "PE 0 to sleep", func() bool { return sleeping(ps[0]) })
	close(done)
	select {
	case <-ended:
	case <-time.After(30 * time.Second): // a hang, not a slow machine
		t.Fatal("PE 0's wait went on after its done channel closed")
	}
	// PE 1 sleeps with a done channel that never closes; PE 2 completes
	// the barrier and wakes it.
	ps[1].WriteData(lpt.S0)
	st = ps[1].ReadStatus()
	go func() {
		for !ps[1].Wait(st, lpt.RDY, time.Minute, never) {
		}
		ended <- true
	}()
	waitFor(t, 10*time.Second, "PE 1 to sleep", func() bool { return sleeping(ps[1]) })
	ps[2].WriteData(lpt.S0)
	<-ended
	if !readyS0(ps[1].ReadStatus()) {
		t.Error("PE 1's wait ended before the barrier completed")
	}
	for _, p := range ps {
		p.Close()
	}
}

// TestExplainStallNamesLatePE: a PE whose barrier does not complete is
// told which PE has not arrived, on either board, and the board records
// it for a launcher (PortInfo.Late).
func TestExplainStallNamesLatePE(t *testing.T) { eachMode(t, testExplainStall) }

func testExplainStall(t *testing.T, locked bool) {
	b, ps := barrierPorts(t, locked)
	ps[0].WriteData(lpt.S0)
	ps[1].WriteData(lpt.S0) // PE 2 stays at S1: it never arrives
	why := ps[0].ExplainStall()
	if !strings.Contains(why, "PE 2 has not arrived") || strings.Contains(why, "PE 1") {
		t.Errorf("PE 0's stall explained as %q, want PE 2 named, and only PE 2", why)
	}
	if late := b.PortInfo(0).Late; len(late) != 1 || late[0] != 2 {
		t.Errorf("PortInfo(0).Late = %v, want [2]", late)
	}
}
