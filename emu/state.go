package emu

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/peset"
)

// memory is a board's shared state: 64-bit words, every one read and
// written atomically and none ever guarded by a lock, backed by ordinary
// memory (New) or by a file that several processes map (CreateShared,
// OpenShared). It holds only what the PEs must agree on; each evaluator
// keeps the levels of the gates in a simulation of its own (sim.go).
//
// Each PE publishes its two registers in a word of its own, as a sequence
// number and the values, changed by one atomic operation per write; each
// connector's faults are a word with a sequence number too, and so are
// power-ups. A consistent view of the inputs is a double collect of those
// words (the same values twice), and T, the sum of their sequence numbers,
// orders such views: every write adds exactly 1. The board's memory — the
// 74LS74 halves — is one word tagged with the T it was computed at,
// advanced by compare-and-swap from an older T only. A PE stopped or killed
// at any instruction so never holds up another beyond its own absence.
type memory []uint64

func (m memory) load(i int) uint64               { return atomic.LoadUint64(&m[i]) }
func (m memory) store(i int, v uint64)           { atomic.StoreUint64(&m[i], v) }
func (m memory) cas(i int, old, new uint64) bool { return atomic.CompareAndSwapUint64(&m[i], old, new) }
func (m memory) add(i int, d uint64) uint64      { return atomic.AddUint64(&m[i], d) }
func (m memory) or(i int, v uint64) uint64       { return atomic.OrUint64(&m[i], v) }
func (m memory) and(i int, v uint64) uint64      { return atomic.AndUint64(&m[i], v) }

// u32 is the first four bytes of word i, for 32-bit atomics and futexes.
func (m memory) u32(i int) *uint32 { return (*uint32)(unsafe.Pointer(&m[i])) }

const (
	stateMagic   = 0x5041505245525332 // "PAPRERS2"
	stateVersion = 6
	reasonBytes  = 256
	lineWords    = 8 // one 64-byte cache line
)

// Header words. Lines 0-1 are written once, at creation (but the
// contention count); line 2 holds the abort word, lines 3-6 its reason;
// line 7 is the board's hot line, and lines 8-9 hold the rest of the
// published statuses.
const (
	hMagic    = iota
	hVersion  // layout version
	hFileSize // bytes: the size the file must have
	hSize     // connectors on the board (the hw netlist size)
	hPEs      // cables plugged in at creation
	hUID      // creator's user id
	hJob      // job id: a random number the creator drew
	hCreator  // creator's process word
	hNets
	hDrivers
	hGates
	hSeed       // power-up seed
	hFixed      // fixed power-up state: fixedSet | the flip-flops' Q bits; 0 for random
	hContention // contended nets counted over the board's settles
	_
	_
	hAbort     = 2 * lineWords // abortState | blamed PE+1 <<8 | aborter's pid <<32
	hReasonLen = hAbort + 1    // bytes of the abort reason
	hReason    = 3 * lineWords // reasonBytes
	// The hot line: read at every poll, written by every evaluation that
	// commits a new state.
	hDFF      = 7 * lineWords // flip-flop word: T <<16 | power epoch <<8 | state
	hSleepers = hDFF + 1      // bit k: PE k sleeps in Wait; bit 32+k: on lines other PEs drive
	hPower    = hDFF + 2      // power-up word: seq <<16 | cycle
	// Published statuses: the committer of each flip-flop word stores every
	// connector's status (two connectors a word) tagged with the word's T,
	// so a port that finds a new flip-flop word reads its status there
	// instead of settling the board again. A board of up to 10 connectors
	// has them in the hot line; a larger one's go on in the next two.
	hStatus     = hDFF + 3
	headerWords = 10 * lineWords
)

// Per-port words, one cache line per connector from layout.perPort.
const (
	pClaim     = iota // process word of the process holding the port, 0 when free
	pOpened           // 1 once the port has been claimed
	pNoticed          // when Err first reported the board's abort (Unix ns)
	pGen              // wake generation (its first 4 bytes are a futex)
	pSleep            // what a sleeping PE waits for (sleepRecord)
	pStalled          // the PEs this PE found late when its wait timed out: mask+1
	pStalledAt        // when (Unix ns)
	pStatus           // a locked board's: the port's status register | the flip-flops' Q bits <<8
)

// Port words: data, control and a sequence number.
const (
	seqShift = 16
	seqOne   = 1 << seqShift
)

// Published status words: T <<16 | two connectors' status registers, the
// even connector's in the low byte.
const (
	pubPerWord = 2
	pubPorts   = (headerWords - hStatus) * pubPerWord
	pubShift   = 16
)

// Every connector of the largest board has a published status.
const _ = uint(pubPorts - lpt.MaxPEs)

// pubStatus is connector k's status register from its published word.
func pubStatus(w uint64, k int) uint8 { return uint8(w >> (8 * (k % pubPerWord))) }

func portWord(seq uint64, data, control uint8) uint64 {
	return seq<<seqShift | uint64(control)<<8 | uint64(data)
}
func wordData(w uint64) uint8    { return uint8(w) }
func wordControl(w uint64) uint8 { return uint8(w >> 8) }

// Fault words: stuck-at-0 pins, stuck-at-1 pins, unplugged, and a sequence
// number. Pins are DB-25 numbers, 1 to 17.
const (
	faultPins      = 18
	faultUnplugged = 1 << (2 * faultPins)
	faultSeqShift  = 2*faultPins + 1
	faultMaxSeq    = 1<<(64-faultSeqShift) - 1
)

func faultWord(seq uint64, stuck0, stuck1 uint32, plugged bool) uint64 {
	w := seq<<faultSeqShift | uint64(stuck1)<<faultPins | uint64(stuck0)
	if !plugged {
		w |= faultUnplugged
	}
	return w
}

// faultInfo decodes a fault word.
func faultInfo(w uint64) (plugged bool, stuck0, stuck1 uint32) {
	const pins = 1<<faultPins - 1
	return w&faultUnplugged == 0, uint32(w) & pins, uint32(w>>faultPins) & pins
}

// Flip-flop word: T, the power epoch it belongs to, the fault epoch (the
// sum of the fault words' sequence numbers, modulo 16) and each 74LS74
// half's Q (bit 2i) and last clock level (bit 2i+1). T has 48 bits: no run
// makes 2^48 port writes.
const (
	dffTShift      = 16
	dffFaultsShift = 12
	dffEpochShift  = 8
	epochMask      = 0xf
)

func dffWord(t, epoch, faults uint64, state uint8) uint64 {
	return t<<dffTShift | (faults&epochMask)<<dffFaultsShift | (epoch&epochMask)<<dffEpochShift | uint64(state)
}
func dffT(w uint64) uint64       { return w >> dffTShift }
func dffEpoch(w uint64) uint64   { return w >> dffEpochShift & epochMask }
func dffState(w uint64) uint8    { return uint8(w) }
func powerCycle(w uint64) uint64 { return w & 0xffff }

// A sleep record: the status bits a sleeping PE waits on, and the
// flip-flops' Q bits it saw; a writer wakes it when either differs.
func sleepRecord(last, mask, q uint8) uint64 {
	return uint64(q)<<16 | uint64(mask)<<8 | uint64(last&mask)
}

const (
	abortWriting = 1
	abortSet     = 2
	fixedSet     = 1 << 8
)

// layout places the regions of a board's memory, in words.
type layout struct {
	ports, faults, perPort, words int
}

func newLayout(size int) layout {
	lines := (size + lineWords - 1) / lineWords * lineWords
	l := layout{ports: headerWords}
	l.faults = l.ports + lines
	l.perPort = l.faults + lines
	l.words = l.perPort + size*lineWords
	return l
}

func (l layout) port(k int) int  { return l.ports + k }
func (l layout) fault(k int) int { return l.faults + k }
func (l layout) per(k, w int) int {
	return l.perPort + k*lineWords + w
}

// alignedMemory allocates words starting on a cache line, so that the
// layout's lines are lines of their own.
func alignedMemory(words int) memory {
	m := make(memory, words+lineWords)
	off := int(uintptr(unsafe.Pointer(&m[0]))%64) / 8
	if off != 0 {
		off = lineWords - off
	}
	return m[off : off+words : off+words]
}

// pid identifies this process in the abort word (os.Getpid is a system
// call).
var pid = uint64(os.Getpid())

// A process word identifies a process in a board's claim and creator
// words: its pid and its start time (clock ticks after boot, field 22 of
// /proc/PID/stat), so that a process given the same pid later, once the
// first is gone, is not taken for it. Start 0 is unknown: the pid alone
// counts. One word, so that a claim stays one compare-and-swap.
const pidBits = 22 // Linux pids are below 2^22 (PID_MAX_LIMIT)

func procWord(pid int, start uint64) uint64 { return start<<pidBits | uint64(pid) }
func wordPID(w uint64) int                  { return int(w & (1<<pidBits - 1)) }

// self is this process's process word.
var self = procWord(os.Getpid(), startTime(os.Getpid()))

// initHeader writes a fresh board's header and puts every connector beyond
// the first pes unplugged.
func (b *Board) initHeader(job uint64, pu PowerUp) {
	m := b.m
	m[hMagic], m[hVersion], m[hFileSize] = stateMagic, stateVersion, uint64(8*b.lay.words)
	m[hSize], m[hPEs] = uint64(b.hw.PEs), uint64(b.pes)
	m[hUID], m[hJob], m[hCreator] = uint64(os.Geteuid()), job, self
	m[hNets], m[hDrivers], m[hGates] = uint64(len(b.nets)), uint64(len(b.drivers)), uint64(len(b.gates))
	m[hSeed] = pu.Seed
	if pu.State != nil {
		m[hFixed] = fixedSet | uint64(pu.State.bits())
	}
	for k := b.pes; k < len(b.ports); k++ {
		m[b.lay.fault(k)] = faultWord(0, 0, 0, false)
	}
}

// claim gives p to the calling process. On a shared board a port held by a
// process that no longer exists is taken over.
func (b *Board) claim(p *Port) error {
	i := b.lay.per(p.pe, pClaim)
	for {
		holder := b.m.load(i)
		if holder != 0 && (b.shared == nil || alive(holder)) {
			return fmt.Errorf("emu: PE %d's port is already open (by process %d; two PEs on one port?): close it first", p.pe, wordPID(holder))
		}
		if b.m.cas(i, holder, self) {
			b.m.store(b.lay.per(p.pe, pOpened), 1)
			return nil
		}
	}
}

func (b *Board) release(p *Port) { b.m.store(b.lay.per(p.pe, pClaim), 0) }

// PortInfo is what a board knows about one connector's user.
type PortInfo struct {
	Opened  bool  // the port has been claimed (Board.Port) at least once
	Holder  int   // pid of the process holding the port now, 0 if none
	Data    uint8 // the data register
	Control uint8 // the control register
	// Noticed is when the PE's port first reported the board's abort to
	// its user (zero if it has not): when that PE got its error.
	Noticed time.Time
	// Late lists the PEs this PE found holding up its barrier when its
	// wait timed out (the driver asks its port to explain the stall), and
	// TimedOut is when; nil and zero if it never timed out.
	Late     []int
	TimedOut time.Time
}

// PortInfo reports on PE k's port: a launcher uses it to tell a program that
// never opened the board, or that exited without closing its PE (the port
// is still claimed), from one that finished cleanly, and to name the PEs a
// timed-out PE waited for.
func (b *Board) PortInfo(pe int) (info PortInfo) {
	defer b.survive(b.guard())
	if pe < 0 || pe >= len(b.ports) {
		return info
	}
	w := b.m.load(b.lay.port(pe))
	info = PortInfo{Opened: b.m.load(b.lay.per(pe, pOpened)) != 0, Holder: wordPID(b.m.load(b.lay.per(pe, pClaim))),
		Data: wordData(w), Control: wordControl(w)}
	if ns := b.m.load(b.lay.per(pe, pNoticed)); ns != 0 {
		info.Noticed = time.Unix(0, int64(ns))
	}
	if late := b.m.load(b.lay.per(pe, pStalled)); late != 0 {
		info.Late = peset.Set(late - 1).Members()
		info.TimedOut = time.Unix(0, int64(b.m.load(b.lay.per(pe, pStalledAt))))
	}
	return info
}

// AbortError is the sticky error every port of an aborted board returns.
type AbortError struct {
	PE     int // the PE blamed, -1 if none
	Reason string
}

func (e *AbortError) Error() string { return "emu: board aborted: " + e.Reason }

// Abort marks the board unusable: from now on every port's Err returns an
// *AbortError with the reason, so every PE's next operation fails and every
// waiting PE stops at once (sleepers are woken). pe is the PE to blame (-1:
// none). The first call wins. A launcher calls it when a PE process dies.
// One compare-and-swap decides it, so an aborter stopped half-way through
// writing the reason still leaves the board aborted, blaming its PE.
func (b *Board) Abort(pe int, reason string) {
	defer b.survive(b.guard())
	if !b.m.cas(hAbort, 0, abortWriting|uint64(pe+1)<<8|pid<<32) {
		return
	}
	if len(reason) > reasonBytes {
		reason = reason[:reasonBytes]
	}
	copy(b.reasonBuf(), reason)
	b.m.store(hReasonLen, uint64(len(reason)))
	b.m.store(hAbort, abortSet|uint64(pe+1)<<8|pid<<32)
	b.wakeAll()
}

// abortWait bounds how long a reader of the abort waits for the aborter to
// finish writing its reason.
const abortWait = time.Millisecond

// Aborted returns the PE blamed (-1 if none) and the reason given to Abort,
// and whether the board has been aborted (by Abort, or by a port that found
// a PE's process dead).
func (b *Board) Aborted() (pe int, reason string, ok bool) {
	defer b.survive(b.guard())
	w := b.m.load(hAbort)
	if w == 0 {
		return -1, "", false
	}
	for start := time.Now(); w&0xff == abortWriting && time.Since(start) < abortWait; w = b.m.load(hAbort) {
		runtime.Gosched() // the aborter is between two stores
	}
	pe = int(w>>8&0xff) - 1
	if w&0xff != abortSet {
		return pe, fmt.Sprintf("aborted by process %d, which stopped before giving its reason", w>>32), true
	}
	return pe, string(b.reasonBuf()[:b.m.load(hReasonLen)]), true
}

func (b *Board) reasonBuf() []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&b.m[hReason])), reasonBytes)
}

// deadPartner checks whether PE turn%PEs has died while holding its port (a
// shared board's PEs are processes; one killed cannot say so). It returns
// that PE and the abort reason, or -1. One PE per call keeps the cost of a
// check (a signal and a /proc read) flat as boards grow.
func (b *Board) deadPartner(turn int) (int, string) {
	k := turn % len(b.ports)
	w := b.lay.per(k, pClaim)
	// Read the claim again once its holder is found dead: a PE that closed
	// its port and exited between the first read and the check did not die
	// holding it, and a dead process can no longer release it.
	holder := b.m.load(w)
	if holder == 0 || holder == self || alive(holder) || b.m.load(w) != holder {
		return -1, ""
	}
	// A PE that gave up waiting for others and exited is not the cause:
	// the PEs it found late are.
	if late := b.m.load(b.lay.per(k, pStalled)); late != 0 {
		pes := peset.Set(late - 1).Members()
		return pes[0], fmt.Sprintf("%s did not arrive at a barrier: PE %d waited until its timeout and exited", peset.Of(pes...), k)
	}
	return k, fmt.Sprintf("PE %d's process (pid %d) died without closing its PE", k, wordPID(holder))
}
