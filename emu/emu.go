// Package emu is a gate-level emulator of the TTL_PAPERS board.
//
// It compiles an hw netlist into an event-driven simulation of its 74LS
// chips — multi-input NANDs and ORs, 74LS74 flip-flops with asynchronous
// preset and clear (both low drives Q and nQ high) and rising-edge clocks,
// tri-state buffers wired onto shared nets, undriven inputs floating high —
// and gives each PE an emulated printer port that applies the SPP
// register↔pin inversions of package lpt, so the driver in package papers is
// exercised exactly as on real hardware. Propagation is zero-delay: a write
// settles the whole board before it returns. A real 74LS74 powers up in
// either state: a board can draw its power-up state from a seed,
// reproducibly, or take a chosen one (PowerUp); by default both halves
// power up with Q low.
//
// Package emu/netlist compiles the netlist; package emu/timed runs the
// same circuit in simulated time (the part library's propagation delays,
// cables, PC port timing), and its package comment says why the two keep
// evaluators of their own; package emu/vcd records either board's run.
//
// A board shared between processes has no lock: its PEs are processes, and
// one can be stopped or killed at any instruction. Each PE publishes its
// registers in a word of its own; every port evaluates the board from a
// consistent snapshot of those words in a private copy of the simulation,
// and the flip-flops' state advances by compare-and-swap (state.go explains
// it), so a PE stopped anywhere holds nobody up beyond its own absence. An
// in-process board's PEs are goroutines of one process, which stop only
// together: a write there changes the board in a short critical section on
// the board's one simulation — its port's pins, the settle from there, the
// statuses that changed — and a read is one load of the port's status word.
// Either way a waiting port blocks (Port.Wait: lpt.Waiter) until a write
// may have changed what it reads.
//
// Faults can be injected on the cable between a PE's port and the board:
// unplugged cables, and any line held at 0 or 1. Port operations are counted
// per PE. Package emulate runs a PAPERS program on a board, one goroutine per
// PE; package launch runs one process per PE on a board shared in memory
// (CreateShared, OpenShared).
package emu

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Board is an emulated board. All methods are safe for concurrent use, and a
// shared board (CreateShared, OpenShared) also across processes.
type Board struct {
	hw  *hw.Netlist
	pes int // PEs whose cables are plugged in at creation

	// The compiled netlist (circuit.go).
	nets    []net
	drivers []driver
	gates   []gate
	vcc     int32 // the supply drivers
	gnd     int32
	ports   []*Port
	ledNets [][2]int32
	dffs    []int32 // the flip-flops, in gate order
	dffOf   []int8  // gate → its index in dffs, -1 for other gates
	ready   int     // the flip-flop driving RDYQ (-1: none)
	intr    int     // the interrupt flag's flip-flop (-1: none)

	lay    layout
	m      memory // the board's state (state.go)
	shared []byte // the mapping of a shared board, nil in-process
	path   string // a shared board's file
	file   boardFile
	broken atomic.Pointer[error]

	claimed atomic.Int32 // ports claimed in this process
	procs   int32        // GOMAXPROCS when the last port was claimed

	// The board's own evaluator, for inspection and for faults and
	// power-ups; on a shared board a port uses it only to explain a
	// stall, never to read or write. A locked
	// board (in-process) has no other: every change of its inputs is
	// stored and settled under mu.
	mu     sync.Mutex
	bs     *sim
	locked bool
	// A locked board's memo of settled transitions (memo.go), and the
	// statuses and flip-flop Q bits its ports' status words hold.
	memo *memo
	cur  []uint8
	curQ uint8

	// In-process: the tick that bounds every sleep (wait.go).
	tick     *time.Timer
	tickOnce sync.Once
	ticking  atomic.Bool
}

// An Option configures a new board (New, NewFromNetlist, CreateShared).
type Option interface{ apply(*options) }

type options struct{ power PowerUp }

// New builds an emulated board for pes PEs (1 to lpt.MaxPEs) on the smallest board
// that holds them; the cables of the remaining connectors are unplugged.
func New(pes int, opts ...Option) (*Board, error) {
	size, err := hw.SizeFor(pes)
	if err != nil {
		return nil, err
	}
	return NewFromNetlist(hw.MustNew(size), pes, opts...)
}

// NewFromNetlist emulates the given netlist with the first pes cables plugged in.
//
// The board settles under a lock (a critical section per write, its memo
// shared by every PE) when its PEs outnumber the CPUs Go runs on, and
// lock-free as a shared board does (each port evaluates for itself) when
// every PE can have a CPU: then two writers need not queue on one lock and
// the lines it guards. 2 PEs on 2 CPUs, BenchmarkBarrier: 1.17-1.22 µs a
// barrier lock-free, 1.46-1.72 locked; 4 or more PEs there: the lock wins.
func NewFromNetlist(h *hw.Netlist, pes int, opts ...Option) (*Board, error) {
	if pes < 1 || pes > h.PEs {
		return nil, fmt.Errorf("emu: %d PEs do not fit the %d-PE board: use 1 to %d", pes, h.PEs, h.PEs)
	}
	return newInProcess(h, pes, pes > runtime.GOMAXPROCS(0), opts), nil
}

// newInProcess makes a board in this process's memory; the tests of the
// lock-free protocol make one unlocked, as a shared board is.
func newInProcess(h *hw.Netlist, pes int, locked bool, opts []Option) *Board {
	b := compile(h, pes)
	b.m = alignedMemory(b.lay.words)
	if b.locked = locked; locked {
		b.memo, b.cur = newMemo(b, boardSlots), make([]uint8, len(b.ports))
	}
	b.start(randomJob(), opts)
	return b
}

// start initialises fresh memory: the header, then the power-on state.
func (b *Board) start(job uint64, opts []Option) {
	var o options
	for _, opt := range opts {
		opt.apply(&o)
	}
	if o.power.Seed == 0 && o.power.State == nil {
		o.power.State = &FlipFlops{} // as the emulator always did
	}
	b.initHeader(job, o.power)
	b.bs = newSim(b, -1)
	b.collect(b.bs, b.bs.snap, -1)
	b.bs.powering = true
	b.bs.rebuild(b.bs.snap, b.powerUpState(0))
	b.bs.built = true
	b.m.store(hDFF, dffWord(0, 0, 0, b.bs.state()))
	b.bs.dffW = b.m.load(hDFF)
	copy(b.bs.out, b.bs.status)
	b.publish(b.bs.out, b.bs.q(), 0)
	if b.memo != nil {
		b.memo.reset(b)
	}
}

func randomJob() uint64 {
	var buf [8]byte
	rand.Read(buf[:])
	return binary.LittleEndian.Uint64(buf[:])
}

// Netlist returns the board's hw netlist.
func (b *Board) Netlist() *hw.Netlist { return b.hw }

// PEs returns the number of connectors on the board.
func (b *Board) PEs() int { return b.hw.PEs }

// Job returns the board's job id: a random number drawn when it was created,
// which names one run of a shared board.
func (b *Board) Job() uint64 {
	defer b.survive(b.guard())
	return b.m.load(hJob)
}

// guard prepares a method that touches a shared board's memory for a file
// truncated under it: the access then panics instead of killing the
// process with SIGBUS, and survive, deferred, turns that into the board's
// error. On an in-process board it does nothing.
func (b *Board) guard() bool {
	if b.shared == nil {
		return false
	}
	return debug.SetPanicOnFault(true)
}

// survive ends a method begun with guard (defer b.survive(b.guard())).
func (b *Board) survive(old bool) {
	if b.shared == nil {
		return
	}
	debug.SetPanicOnFault(old)
	if r := recover(); r != nil {
		// A fault panics with a runtime.Error that has the address.
		re, ok := r.(interface {
			runtime.Error
			Addr() uintptr
		})
		if !ok {
			panic(r)
		}
		err := fmt.Errorf("emu: shared board %s was truncated while in use (a fault at %#x): the run cannot go on", b.path, re.Addr())
		b.broken.CompareAndSwap(nil, &err)
	}
}

// collect reads the inputs of the board into dst: every port word (as s
// sees them: a port's own simulation drops the inert bits), every fault
// word and the power word. In the same pass it sums their sequence numbers
// and compares them with the inputs s applied last, but port k's.
func (b *Board) collect(s *sim, dst []uint64, k int) (v view) {
	size := len(b.ports)
	ports, faults := b.m[b.lay.ports:][:size], b.m[b.lay.faults:][:size]
	dp, df, ignore := dst[:size], dst[size:][:size], s.ignore[:size]
	old, oldFaults := s.words[:size], s.words[size:][:size]
	for i := range ports {
		x := atomic.LoadUint64(&ports[i]) &^ ignore[i]
		dp[i] = x
		v.t += x >> seqShift
		if x != old[i] && i != k {
			v.others = true
		}
	}
	for i := range faults {
		x := atomic.LoadUint64(&faults[i])
		df[i] = x
		v.faults += x >> faultSeqShift
		if x != oldFaults[i] {
			v.others = true
		}
	}
	x := b.m.load(hPower)
	dst[2*size] = x
	v.t += v.faults + x>>seqShift
	v.others = v.others || x != s.words[2*size]
	return v
}

// view is what collect learns of a snapshot besides its words.
type view struct {
	t      uint64 // T: the sum of the sequence numbers
	faults uint64 // the sum of the fault words' sequence numbers
	others bool   // an input other than port k's differs from what s applied last
}

func equalWords(a, b []uint64) bool {
	b = b[:len(a)]
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// evaluate brings s up to date: to a consistent snapshot of the board's
// inputs no older than any write completed before the call, settled from
// the flip-flop state committed last. If the snapshot is newer than that
// state it commits its own, by compare-and-swap from the older word; when
// another evaluator commits first it starts again. Nobody waits for anybody:
// an evaluator that stops half-way leaves the memory as it found it or one
// step further.
func (b *Board) evaluate(s *sim) { b.evaluateAfter(s, -1, 0) }

// evaluateAfter is evaluate for a port k that has just stored word in its
// register word (k < 0: none). When every other input is as s saw it last,
// one collect is a consistent snapshot already: the others had not changed
// since before k's store, and k's word had not changed since.
func (b *Board) evaluateAfter(s *sim, k int, word uint64) {
	size := len(b.ports)
	for tries := 0; ; tries++ {
		if tries > corruptTries {
			err := fmt.Errorf("emu: the memory of board %s is corrupt (its flip-flop word is newer than every snapshot): the run cannot go on", b.path)
			b.broken.CompareAndSwap(nil, &err)
			return
		}
		w := b.m.load(hDFF)
		v := b.collect(s, s.snap, k)
		if w == s.dffW && !v.others && (k < 0 || s.snap[k] == s.words[k]) {
			return // nothing happened since s last looked
		}
		// One collect is enough when only k's word changed since s
		// applied the others (see above).
		if !(tries == 0 && k >= 0 && s.built && !v.others && s.snap[k] == word&^s.ignore[k]) {
			v = b.agreed(s, k, v)
		}
		t, tw := v.t, dffT(w)
		if t < tw {
			continue // cannot happen: w was read before the snapshot
		}
		power := s.snap[2*size]
		epoch, state := power>>seqShift&epochMask, dffState(w)
		if epoch != dffEpoch(w) {
			// A power-up (Reset, PowerCycle) since w: start from its state.
			state, s.powering = b.powerUpState(powerCycle(power)), true
		}
		next, contended := s.nextState(b, v.faults, state)
		if t == tw {
			s.dffW, s.t = w, t
			return
		}
		if b.commit(s, w, dffWord(t, epoch, v.faults, next), t, next, contended) {
			return
		}
		s.dffW = 0 // what s computed was not committed: recompute
	}
}

// agreed collects again until two collects agree: the words then held
// those values together, at one moment between the two. v is what the
// collect into s.snap saw; agreed returns what the agreeing one saw.
func (b *Board) agreed(s *sim, k int, v view) view {
	for {
		v2 := b.collect(s, s.snap2, k)
		if equalWords(s.snap, s.snap2) {
			return v
		}
		s.snap, s.snap2, v = s.snap2, s.snap, v2
	}
}

// nextState settles the board on the snapshot in s.snap from the committed
// flip-flop state: it returns the flip-flops' next state and the count of
// contended nets, and leaves the status outputs in s.out. The first
// evaluation builds the simulation; later ones use the memo where there is
// one (not across a power-up), or apply the snapshot's changes.
func (s *sim) nextState(b *Board, faults uint64, state uint8) (next uint8, contended int) {
	switch {
	case !s.built:
		s.rebuild(s.snap, state)
		s.built = true
		next, contended = s.state(), s.contended
		copy(s.out, s.status)
	case s.memo != nil && !s.powering:
		s.memo.update(s.snap, faults)
		var status []uint8
		next, status, contended = s.memo.settle(b, s, state, s.snap)
		copy(s.out, status)
	default:
		s.apply(s.snap, state)
		next, contended = s.state(), s.contended
		copy(s.out, s.status)
	}
	return next, contended
}

// commit replaces the flip-flop word w that s settled from with nw, by
// compare-and-swap, then publishes the statuses and wakes whom they
// concern. It is false when another evaluator committed first.
func (b *Board) commit(s *sim, w, nw, t uint64, next uint8, contended int) bool {
	if pause != nil {
		pause(s.pe, beforeCommit)
	}
	if !b.m.cas(hDFF, w, nw) {
		return false
	}
	s.dffW, s.t = nw, t
	b.publish(s.out, qBits(next), t)
	b.wake(b.settled(w, nw, s.out, contended))
	return true
}

// settled follows every commit: it counts the contended nets and returns
// the sleepers to wake, for whom the statuses or flip-flops changed.
func (b *Board) settled(old, nw uint64, status []uint8, contended int) uint32 {
	if contended > 0 {
		b.m.add(hContention, uint64(contended))
	}
	return b.toWake(status, old, nw)
}

// settlePort settles a locked board after port k's write of word, and
// commits, under the lock, which the caller holds: no snapshot, since
// every change of the inputs is made under it. The memo says what the
// board settles to; when it does not know, the board's simulation, brought
// up to every input and the committed state, settles it. It returns the
// sleepers to wake, which the caller wakes once it has let the lock go.
func (b *Board) settlePort(k int, word uint64) uint32 {
	b.memo.set(k, word)
	old := b.m.load(hDFF)
	next, status, contended := b.memo.settle(b, b.bs, dffState(old), nil)
	nw := dffWord(dffT(old)+1, dffEpoch(old), old>>dffFaultsShift&epochMask, next)
	b.m.store(hDFF, nw)
	b.publish(status, qBits(next), dffT(nw))
	return b.settled(old, nw, status, contended)
}

// mutate stores a change of the board's inputs (f) and settles the board
// after it; on a locked board both under its lock.
func (b *Board) mutate(f func()) {
	if !b.locked {
		f()
		b.look(func(*sim) {})
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
	b.evaluate(b.bs)
	b.memo.reset(b)
}

// publish stores every connector's status st, computed for the flip-flop
// word of T t (whose Q bits are q) just committed. A store never replaces a
// newer T: a committer descheduled after its commit cannot put back an old
// status. A locked board stores, in each port's own status word, the
// statuses that changed, every one when the Q bits did.
func (b *Board) publish(st []uint8, q uint8, t uint64) {
	if b.locked {
		all := q != b.curQ
		if !all && bytes.Equal(st, b.cur) {
			return // most writes: an arrival that is not the last
		}
		for k, x := range st {
			if x != b.cur[k] || all {
				b.cur[k] = x
				b.m.store(b.lay.per(k, pStatus), uint64(q)<<8|uint64(x))
			}
		}
		b.curQ = q
		return
	}
	pub := b.m[hStatus:][:(len(st)+pubPerWord-1)/pubPerWord]
	for j := range pub {
		nw := t<<pubShift | uint64(st[2*j])
		if 2*j+1 < len(st) {
			nw |= uint64(st[2*j+1]) << 8
		}
		for old := atomic.LoadUint64(&pub[j]); old>>pubShift < t && !atomic.CompareAndSwapUint64(&pub[j], old, nw); old = atomic.LoadUint64(&pub[j]) {
		}
	}
}

// adopt takes port p's status published for flip-flop word w, if there is
// one: the board evaluated from a snapshot of w's T, which holds every write
// completed before w was committed.
func (p *Port) adopt(w uint64) bool {
	x := p.b.m.load(hStatus + p.pe/pubPerWord)
	if x>>pubShift != dffT(w) {
		return false
	}
	p.dffW, p.st, p.lastQ = w, pubStatus(x, p.pe), qBits(dffState(w))
	return true
}

// corruptTries bounds an evaluation's retries: each retry means another
// evaluator committed, unless the memory is corrupt.
const corruptTries = 1 << 20

// look evaluates the board with the board's own evaluator and runs f on it.
func (b *Board) look(f func(s *sim)) {
	defer b.survive(b.guard())
	b.mu.Lock()
	defer b.mu.Unlock()
	b.evaluate(b.bs)
	f(b.bs)
}

// Port returns PE k's emulated printer port. A port can be held by one
// user at a time: Close it to hand it on.
func (b *Board) Port(pe int) (*Port, error) {
	if pe < 0 || pe >= len(b.ports) {
		return nil, fmt.Errorf("emu: PE %d out of range: the board has PEs 0 to %d", pe, len(b.ports)-1)
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	p := b.ports[pe]
	defer b.survive(b.guard())
	if err := b.claim(p); err != nil {
		return nil, err
	}
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	if p.sim == nil && !b.locked {
		p.sim = newSim(b, pe)
		p.sim.ignoreInert()
		p.sim.memo = newMemo(b, portSlots)
	}
	p.err.Store(nil)
	p.held = true
	b.claimed.Add(1)
	atomic.StoreInt32(&b.procs, int32(runtime.GOMAXPROCS(0)))
	p.refresh()
	return p, nil
}

func (b *Board) err() error {
	if e := b.broken.Load(); e != nil {
		return *e
	}
	return nil
}

// LED returns the colour PE k's LED shows, from the LED driver outputs
// (Dark for a connector the board does not have).
func (b *Board) LED(pe int) lpt.LED {
	var l lpt.LED
	if pe < 0 || pe >= len(b.ledNets) {
		return l
	}
	b.look(func(s *sim) {
		n := b.ledNets[pe]
		if s.level(n[0]) {
			l |= lpt.Green
		}
		if s.level(n[1]) {
			l |= lpt.Red
		}
	})
	return l
}

// NetLevel returns the level of a net named as in hw, for tests and
// diagnosis.
func (b *Board) NetLevel(name string) (bool, error) {
	for i := range b.nets {
		if b.nets[i].Name == name {
			var v bool
			b.look(func(s *sim) { v = s.level(int32(i)) })
			return v, nil
		}
	}
	return false, fmt.Errorf("emu: no net %q on the %d-PE board (nets are named as in package hw, e.g. %s, %s)", name, b.hw.PEs, hw.NetRDYQ, hw.CableNet(0, "D6"))
}

// NetNames returns the name of every net on the board, as in hw and the
// KiCad files, in the order of Levels.
func (b *Board) NetNames() []string {
	names := make([]string, len(b.nets))
	for i := range b.nets {
		names[i] = b.nets[i].Name
	}
	return names
}

// Levels appends every net's level, in the order of NetNames, to dst[:0]
// and returns it: one consistent snapshot, after everything written so far
// has settled.
func (b *Board) Levels(dst []bool) []bool {
	dst = dst[:0]
	b.look(func(s *sim) {
		for i := range b.nets {
			dst = append(dst, s.level(int32(i)))
		}
	})
	return dst
}

// Contention counts, over every settle of the board (each port write or
// fault change that reaches its logic), the nets the settle left with
// enabled drivers that disagree (the low one wins). A correct board never
// has any.
func (b *Board) Contention() uint64 {
	defer b.survive(b.guard())
	return b.m.load(hContention)
}

// Test hooks: pause, when set, is called at points where a PE could be
// stopped or descheduled, to stage it there.
type pausePoint int

const (
	afterStore   pausePoint = iota // a write is in the port's word, not yet evaluated
	beforeCommit                   // a new state is computed, not yet committed
	afterCommit                    // a new state is committed, sleepers not yet woken
)

var pause func(pe int, at pausePoint)
