package splitc

// The operations on global memory, with Libsplit-C's completion rules
// (Luna §3.1, §3.2): read and write block; get and put return at once and
// complete by sync (or sync_ctr for the _ctr forms); store is a put without
// acknowledgment, whose receiver waits with store_sync, or every PE with
// all_store_sync. Operations on this PE's own memory complete at once, as
// in Libsplit-C's translation (Figure 2: "if (pid == MYPROC)").

import (
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
)

// get starts a get of *g into dst (nil: into the counter's val only).
func get[T Number](m *Memory, op string, dst *T, g Global[T], ctr *Counter) error {
	if err := checkPtr(m, op, g); err != nil {
		return err
	}
	size := unsafe.Sizeof(*new(T))
	if g.pe == int32(m.self) {
		w, ok := m.scalar(g.addr, size)
		if !ok {
			return m.badAddress(op, g.pe, g.addr)
		}
		ctr.val = w.load()
		if dst != nil {
			*dst = fromBits[T](ctr.val)
		}
		return nil
	}
	if r, off, ok := m.direct(g.addr, size); ok {
		return directGet(m, op, g.pe, r, off, dst, ctr)
	}
	i := m.issue(g.pe, g.addr, ctr, unsafe.Pointer(dst), size)
	return m.send(g.pe, hGet, am.Args{g.addr, uint64(size), uint64(i)}, nil, i)
}

// put starts a put of v to *g; with ack false it is a store counted by sc.
func put[T Number](m *Memory, op string, g Global[T], v T, ctr *Counter) error {
	if err := checkPtr(m, op, g); err != nil {
		return err
	}
	size := unsafe.Sizeof(v)
	if g.pe == int32(m.self) {
		w, ok := m.scalar(g.addr, size)
		if !ok {
			return m.badAddress(op, g.pe, g.addr)
		}
		w.store(bitsOf(v))
		return nil
	}
	if r, off, ok := m.direct(g.addr, size); ok {
		return directPut(m, op, g.pe, r, off, v)
	}
	i := m.issue(g.pe, g.addr, ctr, nil, size)
	return m.send(g.pe, hPut, am.Args{g.addr, uint64(size), bitsOf(v), uint64(i)}, nil, i)
}

// Read returns *g (Split-C's __c_read … __ll_read: "x = *gptr"), a round
// trip when g is on another PE.
func Read[T Number](m *Memory, g Global[T]) (T, error) {
	if err := get(m, "read", nil, g, &m.blk); err != nil {
		return 0, err
	}
	err := m.wait("read", &m.blk, g.pe)
	return fromBits[T](m.blk.val), err
}

// Write sets *g to v and returns once it is done (Split-C's __c_write …:
// "*gptr = x").
func Write[T Number](m *Memory, g Global[T], v T) error {
	if err := put(m, "write", g, v, &m.blk); err != nil {
		return err
	}
	return m.wait("write", &m.blk, g.pe)
}

// Get starts copying *g into *dst and returns (Split-C's __c_get …:
// "x := *gptr"); *dst holds the value once Sync returns. dst must stay
// valid until then.
func Get[T Number](m *Memory, dst *T, g Global[T]) error { return get(m, "get", dst, g, &m.def) }

// GetCtr is Get counted by c instead (Split-C's __c_get_ctr …): SyncCtr(c)
// waits for it.
func GetCtr[T Number](m *Memory, dst *T, g Global[T], c *Counter) error {
	return get(m, "get_ctr", dst, g, c)
}

// Put starts setting *g to v and returns (Split-C's __c_put …: "*gptr :=
// x"); it is done once Sync returns.
func Put[T Number](m *Memory, g Global[T], v T) error { return put(m, "put", g, v, &m.def) }

// PutCtr is Put counted by c instead (Split-C's __c_put_ctr …).
func PutCtr[T Number](m *Memory, g Global[T], v T, c *Counter) error {
	return put(m, "put_ctr", g, v, c)
}

// Sync waits until every Get and Put (not the _ctr forms) has completed
// (Split-C's sync), and reports the first that failed.
func Sync(m *Memory) error { return m.wait("sync", &m.def, -1) }

// IsSync reports whether every Get and Put has completed (Split-C's
// is_sync); it polls once.
func IsSync(m *Memory) (bool, error) {
	if _, err := m.ep.Poll(am.PollBoth, true); err != nil {
		return false, err
	}
	return m.def.n == 0, nil
}

// SyncCtr waits until the operations counted by c have completed
// (Split-C's sync_ctr).
func SyncCtr(m *Memory, c *Counter) error { return m.wait("sync_ctr", c, -1) }

// IsSyncCtr reports whether they have (Split-C's is_sync_ctr).
func IsSyncCtr(m *Memory, c *Counter) (bool, error) {
	if _, err := m.ep.Poll(am.PollBoth, true); err != nil {
		return false, err
	}
	return c.n == 0, nil
}

// Store sets *g to v without acknowledgment (Split-C's __c_store …:
// "*gptr :- x"): the sender cannot know when it is done; the receiver
// waits for the bytes with StoreSync, or every PE with AllStoreSync.
func Store[T Number](m *Memory, g Global[T], v T) error { return StoreCtr(m, g, v, m.stores[0]) }

// StoreCtr is Store counted by the store counter c (Split-C's
// __c_store_ctr … with its rbytes and sbytes).
func StoreCtr[T Number](m *Memory, g Global[T], v T, c *StoreCounter) error {
	if err := checkPtr(m, "store", g); err != nil {
		return err
	}
	size := unsafe.Sizeof(v)
	c.sent += int64(size)
	if g.pe == int32(m.self) {
		w, ok := m.scalar(g.addr, size)
		if !ok {
			return m.badAddress("store", g.pe, g.addr)
		}
		w.store(bitsOf(v))
		c.recv += int64(size)
		return nil
	}
	return m.send(g.pe, hStore, am.Args{g.addr, uint64(size) | uint64(c.id)<<8, bitsOf(v)}, nil, -1)
}

// StoreSync waits until bytes more bytes have been stored to this PE
// (Split-C's store_sync) and counts them as seen.
func StoreSync(m *Memory, bytes int) error { return StoreSyncCtr(m, bytes, m.stores[0]) }

// IsStoreSync reports whether they have (Split-C's is_store_sync).
func IsStoreSync(m *Memory, bytes int) (bool, error) { return IsStoreSyncCtr(m, bytes, m.stores[0]) }

// StoreSyncCtr is StoreSync on the store counter c.
func StoreSyncCtr(m *Memory, bytes int, c *StoreCounter) error {
	err := m.ep.Wait("store_sync", -1, func() bool { return c.recv-c.consumed >= int64(bytes) })
	if err == nil {
		c.consumed += int64(bytes)
	}
	return err
}

// IsStoreSyncCtr is IsStoreSync on the store counter c; when true, it
// counts the bytes as seen.
func IsStoreSyncCtr(m *Memory, bytes int, c *StoreCounter) (bool, error) {
	if _, err := m.ep.Poll(am.PollBoth, true); err != nil {
		return false, err
	}
	if c.recv-c.consumed < int64(bytes) {
		return false, nil
	}
	c.consumed += int64(bytes)
	return true, nil
}

// AllStoreSync returns, on every PE, once every store of every PE has
// arrived (Split-C's all_store_sync; every PE calls it): the PEs sum what
// they sent less what they received until it is zero, as Libsplit-C does
// (§4.1.1), polling in between. The store counts start again from zero.
// When the sum has not moved for the data network's timeout (a link down,
// a PE stopped) every PE returns a *papers.TimeoutError naming the PEs
// its data network cannot reach, shortly after the timeout (their pings
// go out before it). When a PE's data network already knows a PE gone
// (a reset link, a forged frame), every PE returns a *LostError at once.
func AllStoreSync(m *Memory) error {
	w := storeWait{timeout: m.ep.Timeout(), start: time.Now()}
	if err := am.Barrier(m.p); err != nil { // no PE still waits for an answer (see settle)
		return err
	}
	for {
		if _, err := m.ep.Poll(am.PollBoth, true); err != nil {
			return err
		}
		var diff int64
		for _, c := range m.stores {
			diff += c.sent - c.recv
		}
		sum, err := papers.Reduce(m.p, papers.Sum, diff)
		if err != nil {
			return err
		}
		if sum == 0 {
			break
		}
		if err := w.check(m, sum); err != nil {
			return err
		}
	}
	for _, c := range m.stores {
		c.sent, c.recv, c.consumed = 0, 0, 0
	}
	return am.Barrier(m.p)
}

// The bulk forms move a slice (Luna §3.2); they complete like the scalar
// forms. In a spread array the transport reaches one-sided (am.Direct:
// in-process, MPI) a get or put is one copy, and a store one copy and a
// message that counts its bytes on the owner. Otherwise they go in
// packets of the endpoint's MaxPayload (staged where the PEs share
// memory, in one frame on TCP: up to 256 KiB), counting one operation per
// packet: a get's request is small and the owner's handler replies with
// the data, a put or store carries it.

// bulk checks a bulk transfer of n elements at g and returns its size in
// bytes; local is the memory at g when g is on this PE.
func bulk[T Number](m *Memory, op string, g Global[T], n int) (bytes uintptr, local unsafe.Pointer, err error) {
	if err := checkPtr(m, op, g); err != nil {
		return 0, nil, err
	}
	bytes = uintptr(n) * unsafe.Sizeof(*new(T))
	if g.pe == int32(m.self) && n > 0 {
		if local = m.at(g.addr, bytes); local == nil {
			return 0, nil, m.badAddress(op, g.pe, g.addr)
		}
	}
	return bytes, local, nil
}

func bytesOf[T Number](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(*new(T)))
}

func bulkGet[T Number](m *Memory, op string, dst []T, src Global[T], c *Counter) error {
	n, local, err := bulk(m, op, src, len(dst))
	if err != nil || n == 0 {
		return err
	}
	b := bytesOf(dst)
	if local != nil {
		copy(b, unsafe.Slice((*byte)(local), n))
		return nil
	}
	if r, off, ok := m.direct(src.addr, n); ok {
		if err := m.dir.Get(int(src.pe), r, off, b); err != nil {
			return m.errorf("%s: %w", op, err)
		}
		return m.poll()
	}
	per := uintptr(m.ep.MaxPayload())
	for off := uintptr(0); off < n; off += per {
		if err := m.getRoom(op, src.pe); err != nil {
			return err
		}
		k := min(per, n-off)
		i := m.issue(src.pe, src.addr+uint64(off), c, unsafe.Pointer(&b[off]), k)
		m.getting[src.pe] += int(k)
		if err := m.send(src.pe, hBulkGet, am.Args{src.addr + uint64(off), uint64(k), uint64(i)}, nil, i); err != nil {
			m.getting[src.pe] -= int(k)
			return err
		}
	}
	return nil
}

// getWindow bounds the bytes of bulk gets one PE has yet to answer. The
// owner answers each request at once; without a bound, a long get's
// replies outrun the connection and wait in the owner's queue, copied
// (a get of 16 MiB moved at a quarter of a put's speed on TCP). A
// window of a few frames keeps the link full and the queue empty.
const getWindow = 1 << 20

// getRoom waits until PE pe's window has room for another bulk get.
func (m *Memory) getRoom(op string, pe int32) error {
	if m.getting[pe] < getWindow {
		return nil
	}
	m.roomPE = pe
	return m.ep.Wait(op, int(pe), m.room)
}

func bulkPut[T Number](m *Memory, op string, dst Global[T], src []T, c *Counter) error {
	n, local, err := bulk(m, op, dst, len(src))
	if err != nil || n == 0 {
		return err
	}
	b := bytesOf(src)
	if local != nil {
		copy(unsafe.Slice((*byte)(local), n), b)
		return nil
	}
	if r, off, ok := m.direct(dst.addr, n); ok {
		if err := m.dir.Put(int(dst.pe), r, off, b); err != nil {
			return m.errorf("%s: %w", op, err)
		}
		return m.poll()
	}
	per := uintptr(m.ep.MaxPayload())
	for off := uintptr(0); off < n; off += per {
		k := min(per, n-off)
		i := m.issue(dst.pe, dst.addr+uint64(off), c, nil, k)
		if err := m.send(dst.pe, hBulkPut, am.Args{dst.addr + uint64(off), uint64(i)}, b[off:off+k], i); err != nil {
			return err
		}
	}
	return nil
}

// BulkRead copies len(dst) elements from src into dst and returns when
// they are there (Split-C's bulk_read).
func BulkRead[T Number](m *Memory, dst []T, src Global[T]) error {
	if err := bulkGet(m, "bulk_read", dst, src, &m.blk); err != nil {
		return err
	}
	return m.wait("bulk_read", &m.blk, src.pe)
}

// BulkWrite copies src to dst and returns when it is there (Split-C's
// bulk_write).
func BulkWrite[T Number](m *Memory, dst Global[T], src []T) error {
	if err := bulkPut(m, "bulk_write", dst, src, &m.blk); err != nil {
		return err
	}
	return m.wait("bulk_write", &m.blk, dst.pe)
}

// BulkGet starts copying len(dst) elements from src into dst (Split-C's
// bulk_get); Sync waits for them.
func BulkGet[T Number](m *Memory, dst []T, src Global[T]) error {
	return bulkGet(m, "bulk_get", dst, src, &m.def)
}

// BulkGetCtr is BulkGet counted by c (Split-C's bulk_get_ctr).
func BulkGetCtr[T Number](m *Memory, dst []T, src Global[T], c *Counter) error {
	return bulkGet(m, "bulk_get_ctr", dst, src, c)
}

// BulkPut starts copying src to dst (Split-C's bulk_put); Sync waits for
// it. src may be reused as soon as BulkPut returns.
func BulkPut[T Number](m *Memory, dst Global[T], src []T) error {
	return bulkPut(m, "bulk_put", dst, src, &m.def)
}

// BulkPutCtr is BulkPut counted by c (Split-C's bulk_put_ctr).
func BulkPutCtr[T Number](m *Memory, dst Global[T], src []T, c *Counter) error {
	return bulkPut(m, "bulk_put_ctr", dst, src, c)
}

// BulkStore copies src to dst without acknowledgment (Split-C's
// bulk_store): the receiver's StoreSync counts the bytes.
func BulkStore[T Number](m *Memory, dst Global[T], src []T) error {
	return BulkStoreCtr(m, dst, src, m.stores[0])
}

// BulkStoreCtr is BulkStore counted by the store counter c (Split-C's
// bulk_store_ctr).
func BulkStoreCtr[T Number](m *Memory, dst Global[T], src []T, c *StoreCounter) error {
	n, local, err := bulk(m, "bulk_store", dst, len(src))
	if err != nil || n == 0 {
		return err
	}
	c.sent += int64(n)
	b := bytesOf(src)
	if local != nil {
		copy(unsafe.Slice((*byte)(local), n), b)
		c.recv += int64(n)
		return nil
	}
	if r, off, ok := m.direct(dst.addr, n); ok {
		if err := m.dir.Put(int(dst.pe), r, off, b); err != nil {
			return m.errorf("bulk_store: %w", err)
		}
		return m.send(dst.pe, hStoreCount, am.Args{uint64(c.id), uint64(n)}, nil, -1)
	}
	per := uintptr(m.ep.MaxPayload())
	for off := uintptr(0); off < n; off += per {
		k := min(per, n-off)
		if err := m.send(dst.pe, hBulkStore, am.Args{dst.addr + uint64(off), uint64(c.id)}, b[off:off+k], -1); err != nil {
			return err
		}
	}
	return nil
}

// Atomic procedures run on the PE that owns the memory, in a handler, so
// nothing else touches the location meanwhile (Luna §3.5, §4.5: "active
// message handlers are atomic procedures").

// AtomicProc is a program's atomic procedure on a T (NewAtomic).
type AtomicProc[T Number] struct{ id int }

// NewAtomic registers fn as an atomic procedure: it gets the location and
// two argument words and returns a word to the caller of Atomic. Every PE
// registers the same procedures in the same order. fn gets a copy of the
// location, which is written back if nothing changed it meanwhile — in a
// spread array another PE may put to it one-sided while fn runs —, else
// fn runs again on the new value: so fn computes from *loc, a and b only.
func NewAtomic[T Number](m *Memory, fn func(loc *T, a, b uint64) uint64) AtomicProc[T] {
	loc := new(T) // procedures run one at a time on this PE
	m.atomics = append(m.atomics, func(old uint64, _ uintptr, a, b uint64) (uint64, uint64, bool) {
		*loc = fromBits[T](old)
		res := fn(loc, a, b)
		return bitsOf(*loc), res, true
	})
	return AtomicProc[T]{id: len(m.atomics) - 1}
}

// runAtomic runs procedure fn at g and returns its result.
func runAtomic[T Number](m *Memory, op string, fn int, g Global[T], a, b uint64) (uint64, error) {
	if err := checkPtr(m, op, g); err != nil {
		return 0, err
	}
	size := unsafe.Sizeof(*new(T))
	if fn >= len(m.atomics) {
		return 0, m.errorf("%s: %w: atomic procedure %d was not registered here (NewAtomic)", op, papers.ErrArgument, fn)
	}
	if g.pe == int32(m.self) { // no handler can run meanwhile: this PE is not polling
		w, ok := m.scalar(g.addr, size)
		if !ok {
			return 0, m.badAddress(op, g.pe, g.addr)
		}
		return w.run(m.atomics[fn], a, b), nil
	}
	i := m.issue(g.pe, g.addr, &m.blk, nil, size)
	if err := m.send(g.pe, hAtomic, am.Args{g.addr, uint64(fn) | uint64(size)<<16 | uint64(i)<<32, a, b}, nil, i); err != nil {
		return 0, err
	}
	err := m.wait(op, &m.blk, g.pe)
	return m.blk.val, err
}

// Atomic runs proc on *g, on g's PE, and returns its result (Split-C's
// atomic, atomic_i, atomic_d).
func Atomic[T Number](m *Memory, proc AtomicProc[T], g Global[T], a, b uint64) (uint64, error) {
	return runAtomic(m, "atomic", proc.id, g, a, b)
}

// Exchange sets *g to v and returns the old value (Split-C's exchange).
func Exchange[T Integer](m *Memory, g Global[T], v T) (T, error) {
	old, err := runAtomic(m, "exchange", atomicExchange, g, bitsOf(v), 0)
	return fromBits[T](old), err
}

// SetFlag sets *g to 1 and returns the old value (Split-C's
// test_and_set).
func SetFlag[T Integer](m *Memory, g Global[T]) (T, error) {
	old, err := runAtomic(m, "test_and_set", atomicTestAndSet, g, 0, 0)
	return fromBits[T](old), err
}

// CmpAndSwap sets *g to v if it holds test, and reports whether it did
// (Split-C's cmp_and_swap).
func CmpAndSwap[T Integer](m *Memory, g Global[T], test, v T) (bool, error) {
	ok, err := runAtomic(m, "cmp_and_swap", atomicCmpAndSwap, g, bitsOf(test), bitsOf(v))
	return ok == 1, err
}

// FetchAndAdd adds v to *g and returns the old value (Split-C's
// fetch_and_add).
func FetchAndAdd[T Integer](m *Memory, g Global[T], v T) (T, error) {
	old, err := runAtomic(m, "fetch_and_add", atomicFetchAndAdd, g, bitsOf(v), 0)
	return fromBits[T](old), err
}
