package splitc

// Split-C's global memory (Luna §3.1, §3.2, §3.4, §3.5; §4.1 for how it
// stands on active messages): global and spread pointers, blocking read and
// write, split-phase get and put, one-way store, the bulk forms, and the
// atomic procedures. docs/splitc.md maps every name.

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/internal/word"
	"github.com/ttlpapers/ttlpapers/papers"
)

// An address is a segment number and a byte offset in it: the "local
// address" half of a global pointer. Spread segments (AllSpreadMalloc) have
// the same number on every PE, as Split-C's global heap starts at the same
// address on every PE; a segment of ToGlobal has a number of its PE's own.
const (
	offsetBits = 40
	localSeg   = 1 << 23 // segment numbers of ToGlobal
)

// Global is a global pointer to a T: a PE and an address on it (Split-C's
// T *global). Add moves it within its PE's memory; it is comparable, and
// its zero value is the nil global pointer.
type Global[T Number] struct {
	pe   int32
	addr uint64 // segment+1 << offsetBits | byte offset: 0 is nil
}

// PE is the PE the pointer points to (Split-C's toproc).
func (g Global[T]) PE() int { return int(g.pe) }

// IsNil reports whether g is the nil global pointer.
func (g Global[T]) IsNil() bool { return g.addr == 0 }

// Add returns g moved by k elements on the same PE (global-pointer
// arithmetic: "incrementing a global pointer will always increment the
// local address").
func (g Global[T]) Add(k int) Global[T] {
	g.addr = uint64(int64(g.addr) + int64(k)*int64(unsafe.Sizeof(*new(T))))
	return g
}

func (g Global[T]) String() string {
	if g.IsNil() {
		return "nil"
	}
	return fmt.Sprintf("PE %d segment %d offset %d", g.pe, g.addr>>offsetBits-1, g.addr&(1<<offsetBits-1))
}

// Spread is a spread array: element i lives on PE i mod PROCS at index i
// div PROCS of that PE's part (Split-C's T *spread, from all_spread_malloc).
// At is sptr[i]; moving a spread pointer by one (sptr++) is At(i+1): the
// PE increments until it wraps, then the local address.
type Spread[T Number] struct {
	seg   uint32
	count int
	n     int
}

// Len is the number of elements.
func (s Spread[T]) Len() int { return s.count }

// At returns the global pointer to element i (sptr[i]).
func (s Spread[T]) At(i int) Global[T] {
	size := int(unsafe.Sizeof(*new(T)))
	return Global[T]{pe: int32(i % s.n), addr: uint64(s.seg+1)<<offsetBits | uint64(i/s.n*size)}
}

// PerPE is the number of elements each PE holds: ceil(Len/PROCS).
func (s Spread[T]) PerPE() int { return (s.count + s.n - 1) / s.n }

// Local returns this PE's part of s as a slice: elements Self, Self+PROCS,
// … (Split-C's for_my_1d walks it). Writing it is writing global memory:
// the usual rules of sync and barriers apply.
func Local[T Number](m *Memory, s Spread[T]) []T {
	sg := m.segment(uint64(s.seg+1) << offsetBits)
	if sg == nil {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(sg.mem))), len(sg.mem)/int(unsafe.Sizeof(*new(T))))
}

// Counter counts split-phase operations not yet complete (Split-C's
// Counter). Its zero value is ready to use: pass it to the _ctr forms, and
// wait for them with SyncCtr. An operation that failed (a bad address on
// the other PE) is reported by the SyncCtr that waits for it.
type Counter struct {
	n      int
	val    uint64 // the last answer (the blocking forms read it)
	failed bool
	badPE  int32
	bad    uint64
}

// StoreCounter counts the bytes stored with it (Split-C's pair of store
// counters rbytes and sbytes). Every PE makes the same store counters in
// the same order (NewStoreCounter): a store names its counter by number,
// and the receiver counts in its own counter of that number.
type StoreCounter struct {
	id                   int
	sent, recv, consumed int64
}

// NewStoreCounter makes this PE's next store counter; every PE makes the
// same ones in the same order.
func NewStoreCounter(m *Memory) *StoreCounter {
	c := &StoreCounter{id: len(m.stores)}
	m.stores = append(m.stores, c)
	return c
}

// Memory is one PE's global-memory layer: its segments, its outstanding
// operations and its handlers on the data network (Attach).
type Memory struct {
	p       *papers.PE
	ep      *am.Endpoint
	self, n int
	segs    []segment // spread segments, numbered alike on every PE
	locals  []segment // ToGlobal segments, numbered by this PE
	pend    []pending // outstanding remote operations; free ones chain through next
	free    int32
	def     Counter // gets and puts without a counter of their own (sync)
	blk     Counter // the blocking operation under way (read, write, atomics)
	perPE   []int32 // operations on def each PE has yet to answer, to name it on a timeout
	getting []int   // bytes of bulk gets each PE has yet to answer (getWindow)
	roomPE  int32   // the PE a bulk get waits on for room in its window
	room    func() bool
	stores  []*StoreCounter
	atomics []atomicFn

	dir     am.Direct // the transport's one-sided access, if any (direct.go)
	scratch []byte    // a scalar on its way through dir: 8 bytes of their own, for cgo's pointer check
	polls   uint32    // direct operations since the last poll
}

type segment struct {
	mem    []byte // backed by []uint64 (or the caller's []T, or dir's memory), so a Number is aligned
	live   bool
	spread bool // a spread array's: other PEs may reach it one-sided (scalar)
	region int  // dir's region number + 1; 0: not reachable through dir
}

// pending is one outstanding remote operation: where the answer goes and
// what to count down.
type pending struct {
	dst  unsafe.Pointer // the get's destination, or nil
	size uint32
	ctr  *Counter
	pe   int32
	addr uint64
	next int32
}

// statuses a request handler answers with.
const (
	statusOK = iota
	statusBadAddress
)

// atomicFn is an atomic procedure as it runs: from the location's value
// old, its new value and the result for the caller, or write false to
// leave the location alone.
type atomicFn func(old uint64, size uintptr, a, b uint64) (x, result uint64, write bool)

// The handlers, at numbers reserved for Split-C on every PE.
var hBase = am.Reserve(numHandlers)

const (
	hGet = iota
	hGetReply
	hPut
	hAck
	hStore
	hBulkGet
	hBulkGetReply
	hBulkPut
	hBulkStore
	hAtomic
	hStoreCount
	numHandlers
)

// The built-in atomic procedures; NewAtomic numbers the program's after them.
const (
	atomicExchange = iota
	atomicTestAndSet
	atomicCmpAndSwap
	atomicFetchAndAdd
)

// memKey keys a PE's Memory on its endpoint.
type memKey struct{}

// Attach returns this PE's global memory, setting it up on first use. Every
// PE must attach before another PE uses its memory (AllSpreadMalloc,
// which every PE calls, ends in a barrier).
func Attach(p *papers.PE) (*Memory, error) {
	ep, err := am.Of(p)
	if err != nil {
		return nil, fmt.Errorf("splitc: global memory: %w", err)
	}
	if m, ok := ep.Value(memKey{}).(*Memory); ok {
		return m, nil
	}
	m := &Memory{p: p, ep: ep, self: p.Self(), n: p.PEs(), free: -1, perPE: make([]int32, p.PEs()), getting: make([]int, p.PEs()), dir: ep.Direct(), scratch: make([]byte, 8)}
	m.room = func() bool { return m.getting[m.roomPE] < getWindow }
	NewStoreCounter(m) // the default pair of store counters, number 0
	m.atomics = []atomicFn{
		atomicExchange: func(old uint64, _ uintptr, a, _ uint64) (uint64, uint64, bool) {
			return a, old, true
		},
		atomicTestAndSet: func(old uint64, _ uintptr, _, _ uint64) (uint64, uint64, bool) {
			return 1, old, true
		},
		atomicCmpAndSwap: func(old uint64, size uintptr, test, v uint64) (uint64, uint64, bool) {
			if old != test&mask(size) {
				return 0, 0, false
			}
			return v, 1, true
		},
		atomicFetchAndAdd: func(old uint64, _ uintptr, a, _ uint64) (uint64, uint64, bool) {
			return old + a, old, true
		},
	}
	for i, h := range []am.Handler{
		hGet: m.onGet, hGetReply: m.onAnswer, hPut: m.onPut, hAck: m.onAnswer, hStore: m.onStore,
		hBulkGet: m.onBulkGet, hBulkGetReply: m.onBulkGetReply, hBulkPut: m.onBulkPut, hBulkStore: m.onBulkStore,
		hAtomic: m.onAtomic, hStoreCount: m.onStoreCount,
	} {
		ep.Install(hBase+am.HandlerID(i), h)
	}
	// Long payloads go straight to their memory, where the transport can.
	ep.Place(hBase+hBulkPut, m.placeAt)
	ep.Place(hBase+hBulkStore, m.placeAt)
	ep.Place(hBase+hBulkGetReply, m.placeGet)
	ep.SetValue(memKey{}, m)
	return m, nil
}

// PE is the papers PE the memory belongs to.
func (m *Memory) PE() *papers.PE { return m.p }

func (m *Memory) errorf(format string, a ...any) error {
	return papers.Errorf("splitc", m.self, format, a...)
}

// AllSpreadMalloc allocates a spread array of count elements, zeroed
// (Split-C's all_spread_malloc(count, sizeof(T))): every PE calls it, in
// the same order, and gets the same array; each holds PerPE elements.
func AllSpreadMalloc[T Number](m *Memory, count int) (Spread[T], error) {
	if count < 1 {
		return Spread[T]{}, m.errorf("all_spread_malloc: %w: count %d: allocate at least 1 element", papers.ErrArgument, count)
	}
	if err := am.Barrier(m.p); err != nil { // no PE still waits for an answer (see settle)
		return Spread[T]{}, err
	}
	s := Spread[T]{seg: uint32(len(m.segs)), count: count, n: m.n}
	// Same number on every PE, or the program called it in different
	// orders: every PE learns whether PE 0's number is its own.
	seg0, err := papers.Broadcast(m.p, 0, s.seg)
	if err != nil {
		return Spread[T]{}, err
	}
	agree, err := m.p.All(seg0 == s.seg)
	if err != nil {
		return Spread[T]{}, err
	}
	if !agree {
		return Spread[T]{}, m.errorf("all_spread_malloc: the PEs have made different numbers of spread arrays: every PE must call AllSpreadMalloc and AllSpreadFree in the same order")
	}
	size := s.PerPE() * int(unsafe.Sizeof(*new(T)))
	if m.dir != nil {
		mem, region, err := m.dir.Allocate(size)
		if err != nil {
			return Spread[T]{}, m.errorf("all_spread_malloc: %w", err)
		}
		m.segs = append(m.segs, segment{mem: mem, live: true, spread: true, region: region + 1})
	} else {
		words := make([]uint64, (size+7)/8)
		m.segs = append(m.segs, segment{mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size), live: true, spread: true})
	}
	return s, am.Barrier(m.p) // nobody uses it before every PE has it
}

// AllSpreadFree frees a spread array (Split-C's all_spread_free): every PE
// calls it, after its last access to the array; it returns once every PE
// has, and the array's pointers are then bad addresses.
func AllSpreadFree[T Number](m *Memory, s Spread[T]) error {
	if int(s.seg) >= len(m.segs) || !m.segs[s.seg].live {
		return m.errorf("all_spread_free: %w: the array is not allocated (freed twice?)", papers.ErrArgument)
	}
	if err := Sync(m); err != nil {
		return err
	}
	if err := am.Barrier(m.p); err != nil { // every PE is done with it
		return err
	}
	var err error
	if r := m.segs[s.seg].region; r > 0 {
		err = m.dir.Free(r - 1)
	}
	m.segs[s.seg] = segment{}
	return err
}

// ToGlobal returns a global pointer to local[0] on this PE (Split-C's
// toglobal(MYPROC, addr)), which the PE may hand to others: local must not
// move while they use it. Each call registers a segment.
func ToGlobal[T Number](m *Memory, local []T) Global[T] {
	if len(local) == 0 {
		return Global[T]{}
	}
	size := len(local) * int(unsafe.Sizeof(local[0]))
	m.locals = append(m.locals, segment{mem: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(local))), size), live: true})
	return Global[T]{pe: int32(m.self), addr: uint64(localSeg+len(m.locals)) << offsetBits}
}

// segment returns the live segment of an address, or nil.
func (m *Memory) segment(addr uint64) *segment {
	seg := int(addr>>offsetBits) - 1
	var sg *segment
	switch {
	case seg >= localSeg && seg-localSeg < len(m.locals):
		sg = &m.locals[seg-localSeg]
	case seg >= 0 && seg < len(m.segs):
		sg = &m.segs[seg]
	}
	if sg == nil || !sg.live {
		return nil
	}
	return sg
}

// at returns the address of size bytes at addr in this PE's memory, or nil
// when they are not all inside one live segment.
func (m *Memory) at(addr uint64, size uintptr) unsafe.Pointer {
	sg := m.segment(addr)
	off := addr & (1<<offsetBits - 1)
	if sg == nil || size == 0 || off+uint64(size) > uint64(len(sg.mem)) {
		return nil
	}
	return unsafe.Pointer(&sg.mem[off])
}

// scalar is a Number of global memory on this PE. In a spread array, which
// other PEs may read and write one-sided while this PE's handlers run
// (am.Direct), it is read and written atomically a word at a time
// (package word), so an atomic procedure's read and write are not split by
// another PE's put; ToGlobal memory only this PE's handlers touch.
type scalar struct {
	p      unsafe.Pointer
	size   uintptr
	shared bool
}

// scalar returns the scalar of size bytes at addr; false when it is not
// inside one live segment.
func (m *Memory) scalar(addr uint64, size uintptr) (scalar, bool) {
	p := m.at(addr, size)
	if p == nil {
		return scalar{}, false
	}
	sg := m.segment(addr)
	return scalar{p: p, size: size, shared: sg.spread && uintptr(p)%size == 0}, true
}

func (s scalar) load() uint64 {
	if s.shared {
		return word.Load(s.p, s.size)
	}
	return load(s.p, s.size)
}

func (s scalar) store(x uint64) {
	if s.shared {
		word.Store(s.p, s.size, x)
	} else {
		store(s.p, s.size, x)
	}
}

// run runs atomic procedure fn on it and returns the procedure's result:
// on shared memory a compare-and-swap of the value it computed from the
// value it read, again if a one-sided put changed it meanwhile.
func (s scalar) run(fn atomicFn, a, b uint64) uint64 {
	for {
		old := s.load()
		x, res, write := fn(old, s.size, a, b)
		switch {
		case !write:
			return res
		case !s.shared:
			store(s.p, s.size, x)
			return res
		case word.CompareAndSwap(s.p, s.size, old, x):
			return res
		}
	}
}

func (m *Memory) badAddress(op string, pe int32, addr uint64) error {
	return m.errorf("%s: PE %d has no global memory at segment %d offset %d (freed, out of range, or not from AllSpreadMalloc or ToGlobal)", op, pe, int(addr>>offsetBits)-1, addr&(1<<offsetBits-1))
}

// checkPtr validates a global pointer before any work.
func checkPtr[T Number](m *Memory, op string, g Global[T]) error {
	if g.IsNil() {
		return m.errorf("%s: %w: nil global pointer", op, papers.ErrArgument)
	}
	if g.pe < 0 || int(g.pe) >= m.n {
		return m.errorf("%s: %w: global pointer to PE %d: the PEs are 0 to %d", op, papers.ErrArgument, g.pe, m.n-1)
	}
	return nil
}

// load and store move a scalar's bits; mask keeps size bytes' worth.
func load(p unsafe.Pointer, size uintptr) uint64 {
	switch size {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

func store(p unsafe.Pointer, size uintptr, x uint64) {
	switch size {
	case 1:
		*(*uint8)(p) = uint8(x)
	case 2:
		*(*uint16)(p) = uint16(x)
	case 4:
		*(*uint32)(p) = uint32(x)
	default:
		*(*uint64)(p) = x
	}
}

func mask(size uintptr) uint64 {
	if size >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*size) - 1
}

func bitsOf[T Number](v T) uint64 { return load(unsafe.Pointer(&v), unsafe.Sizeof(v)) }

func fromBits[T Number](x uint64) (v T) {
	store(unsafe.Pointer(&v), unsafe.Sizeof(v), x)
	return v
}

// issue counts an operation on ctr and takes a slot for its answer.
func (m *Memory) issue(pe int32, addr uint64, ctr *Counter, dst unsafe.Pointer, size uintptr) int32 {
	i := m.free
	if i < 0 {
		m.pend = append(m.pend, pending{})
		i = int32(len(m.pend) - 1)
	} else {
		m.free = m.pend[i].next
	}
	m.pend[i] = pending{dst: dst, size: uint32(size), ctr: ctr, pe: pe, addr: addr, next: -1}
	ctr.n++
	if ctr == &m.def {
		m.perPE[pe]++
	}
	return i
}

// answer counts the operation of slot i down, records its value and
// status, and frees the slot.
func (m *Memory) answer(i int32, val uint64, status uint64) {
	pd := m.pend[i]
	c := pd.ctr
	c.n--
	c.val = val
	if status != statusOK && !c.failed {
		c.failed, c.badPE, c.bad = true, pd.pe, pd.addr
	}
	if c == &m.def {
		m.perPE[pd.pe]--
	}
	m.pend[i] = pending{next: m.free}
	m.free = i
}

// send sends a Split-C request; when it fails, the operation of slot i (if
// any) is counted down, failed.
func (m *Memory) send(pe int32, h int, a am.Args, payload []byte, i int32) error {
	var err error
	if payload == nil {
		err = m.ep.Request(int(pe), hBase+am.HandlerID(h), a)
	} else {
		err = m.ep.RequestMedium(int(pe), hBase+am.HandlerID(h), a, payload)
	}
	if err != nil && i >= 0 {
		m.answer(i, 0, statusBadAddress)
	}
	return err
}

// wait waits until ctr has no operation outstanding, naming the PE waited
// on, and reports the first that failed.
func (m *Memory) wait(op string, ctr *Counter, on int32) error {
	if ctr.n > 0 {
		err := m.ep.Wait(op, int(on), func() bool { return ctr.n == 0 })
		if err != nil {
			if on < 0 && ctr == &m.def {
				return fmt.Errorf("%w (operations outstanding on PEs %v)", err, m.outstanding())
			}
			return err
		}
	}
	if ctr.failed {
		ctr.failed = false
		return m.badAddress(op, ctr.badPE, ctr.bad)
	}
	return nil
}

func (m *Memory) outstanding() []int {
	var pes []int
	for pe, k := range m.perPE {
		if k > 0 {
			pes = append(pes, pe)
		}
	}
	return pes
}

// Handlers. Each runs atomically on the PE that owns the memory, or on the
// one that issued the operation for the answers, as Libsplit-C's do on
// CMAM (Luna, Figures 3 to 5).

func (m *Memory) onGet(msg *am.Msg) {
	a := msg.Args
	size := uintptr(a[1])
	if w, ok := m.scalar(a[0], size); ok {
		msg.Reply(hBase+hGetReply, am.Args{a[2], w.load(), statusOK})
		return
	}
	msg.Reply(hBase+hGetReply, am.Args{a[2], 0, statusBadAddress})
}

// onAnswer completes a get (storing the value where it goes), a put's
// acknowledgment or an atomic procedure's result: Args{slot, value, status}.
func (m *Memory) onAnswer(msg *am.Msg) {
	a := msg.Args
	i := int32(a[0])
	if pd := &m.pend[i]; pd.dst != nil && a[2] == statusOK {
		store(pd.dst, uintptr(pd.size), a[1])
	}
	m.answer(i, a[1], a[2])
}

func (m *Memory) onPut(msg *am.Msg) {
	a := msg.Args
	size := uintptr(a[1])
	st := uint64(statusOK)
	if w, ok := m.scalar(a[0], size); ok {
		w.store(a[2])
	} else {
		st = statusBadAddress
	}
	msg.Reply(hBase+hAck, am.Args{a[3], 0, st})
}

func (m *Memory) onStore(msg *am.Msg) {
	a := msg.Args
	size, ctr := uintptr(a[1]&0xff), int(a[1]>>8)
	w, ok := m.scalar(a[0], size)
	if !ok || ctr >= len(m.stores) {
		msg.Fail(m.badAddress("store", int32(m.self), a[0]))
		return
	}
	w.store(a[2])
	m.stores[ctr].recv += int64(size)
}

// placeAt is the memory a bulk put or store of n bytes writes (args[0]
// its address; am.Placer), or nil when it is not this PE's.
func (m *Memory) placeAt(_ int, a am.Args, n int) []byte {
	if p := m.at(a[0], uintptr(n)); p != nil {
		return unsafe.Slice((*byte)(p), n)
	}
	return nil
}

// placeGet is the destination of a bulk get's answer of n bytes from PE
// src (args[0] the get's number), or nil.
func (m *Memory) placeGet(src int, a am.Args, n int) []byte {
	if a[2] != statusOK || a[0] >= uint64(len(m.pend)) {
		return nil
	}
	pd := &m.pend[a[0]]
	if pd.dst == nil || int(pd.pe) != src || int(pd.size) != n {
		return nil
	}
	return unsafe.Slice((*byte)(pd.dst), n)
}

// land copies a long payload to p, unless the transport read it there
// (am.Placer).
func land(p unsafe.Pointer, payload []byte) {
	if unsafe.Pointer(unsafe.SliceData(payload)) != p {
		copy(unsafe.Slice((*byte)(p), len(payload)), payload)
	}
}

func (m *Memory) onBulkGet(msg *am.Msg) {
	a := msg.Args
	n := uintptr(a[1])
	if p := m.at(a[0], n); p != nil {
		msg.ReplyMedium(hBase+hBulkGetReply, am.Args{a[2], 0, statusOK}, unsafe.Slice((*byte)(p), n))
		return
	}
	msg.Reply(hBase+hBulkGetReply, am.Args{a[2], 0, statusBadAddress})
}

func (m *Memory) onBulkGetReply(msg *am.Msg) {
	a := msg.Args
	i := int32(a[0])
	pd := &m.pend[i]
	if a[2] == statusOK {
		land(pd.dst, msg.Payload[:min(len(msg.Payload), int(pd.size))])
	}
	m.getting[pd.pe] -= int(pd.size)
	m.answer(i, 0, a[2])
}

func (m *Memory) onBulkPut(msg *am.Msg) {
	a := msg.Args
	st := uint64(statusOK)
	if p := m.at(a[0], uintptr(len(msg.Payload))); p != nil {
		land(p, msg.Payload)
	} else {
		st = statusBadAddress
	}
	msg.Reply(hBase+hAck, am.Args{a[1], 0, st})
}

func (m *Memory) onBulkStore(msg *am.Msg) {
	a := msg.Args
	ctr := int(a[1])
	p := m.at(a[0], uintptr(len(msg.Payload)))
	if p == nil || ctr >= len(m.stores) {
		msg.Fail(m.badAddress("bulk_store", int32(m.self), a[0]))
		return
	}
	land(p, msg.Payload)
	m.stores[ctr].recv += int64(len(msg.Payload))
}

// onStoreCount counts the bytes of a bulk store put one-sided before it:
// Args{store counter, bytes}.
func (m *Memory) onStoreCount(msg *am.Msg) {
	ctr := int(msg.Args[0])
	if ctr >= len(m.stores) {
		msg.Fail(m.errorf("bulk_store from PE %d: store counter %d: this PE has %d (every PE makes the same store counters in the same order)", msg.Src, ctr, len(m.stores)))
		return
	}
	m.stores[ctr].recv += int64(msg.Args[1])
}

func (m *Memory) onAtomic(msg *am.Msg) {
	a := msg.Args
	fn, size, slot := int(a[1]&0xffff), uintptr(a[1]>>16&0xff), a[1]>>32
	if w, ok := m.scalar(a[0], size); ok && fn < len(m.atomics) {
		msg.Reply(hBase+hGetReply, am.Args{slot, w.run(m.atomics[fn], a[2], a[3]), statusOK})
		return
	}
	msg.Reply(hBase+hGetReply, am.Args{slot, 0, statusBadAddress})
}
