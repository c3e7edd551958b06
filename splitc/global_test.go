package splitc_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
)

// gm runs fn on n emulated PEs with their global memory.
func gm(t testing.TB, n int, fn func(p *papers.PE, m *splitc.Memory) error) {
	t.Helper()
	err := emulate.Run(n, papers.Config{Timeout: 20 * time.Second}, func(p *papers.PE) error {
		m, err := splitc.Attach(p)
		if err != nil {
			return err
		}
		return fn(p, m)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSeedSpreadFlag runs the report's §4.4 example: "sptr =
// all_spread_malloc(PROCS, sizeof(int)); sptr[(MYPROC+1)%PROCS] = 1;".
func TestSeedSpreadFlag(t *testing.T) {
	gm(t, 4, func(p *papers.PE, m *splitc.Memory) error {
		sptr, err := splitc.AllSpreadMalloc[int32](m, splitc.PROCS(p))
		if err != nil {
			return err
		}
		if err := splitc.Write(m, sptr.At((splitc.MYPROC(p)+1)%splitc.PROCS(p)), 1); err != nil {
			return err
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		if mine := splitc.Local(m, sptr); len(mine) != 1 || mine[0] != 1 {
			t.Errorf("PE %d: its flag is %v, want [1]", p.Self(), mine)
		}
		return splitc.AllSpreadFree(m, sptr)
	})
}

// TestSpreadLayout: element i lives on PE i mod PROCS at index i div PROCS.
func TestSpreadLayout(t *testing.T) {
	gm(t, 3, func(p *papers.PE, m *splitc.Memory) error {
		s, err := splitc.AllSpreadMalloc[uint16](m, 10)
		if err != nil {
			return err
		}
		for i := p.Self(); i < s.Len(); i += 3 {
			if g := s.At(i); g.PE() != p.Self() {
				t.Errorf("At(%d) is on PE %d", i, g.PE())
			}
		}
		if s.PerPE() != 4 || len(splitc.Local(m, s)) != 4 {
			t.Errorf("10 elements on 3 PEs: %d per PE, local part of %d", s.PerPE(), len(splitc.Local(m, s)))
		}
		local := splitc.Local(m, s)
		for k := range local {
			local[k] = uint16(100*(p.Self()+3*k) + 7)
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		for i := range s.Len() {
			v, err := splitc.Read(m, s.At(i))
			if err != nil {
				return err
			}
			if v != uint16(100*i+7) {
				t.Errorf("PE %d: element %d is %d, want %d", p.Self(), i, v, 100*i+7)
			}
		}
		// A global pointer moves within its PE; a spread one across PEs.
		if g := s.At(1).Add(1); g != s.At(4) {
			t.Errorf("At(1).Add(1) = %v, want At(4) = %v", g, s.At(4))
		}
		return splitc.Barrier(p)
	})
}

// testTypes runs read, write, get, put and store of one type between every
// PE and the next.
func testTypes[T splitc.Number](t *testing.T, p *papers.PE, m *splitc.Memory, val func(pe, k int) T) error {
	n, me := p.PEs(), p.Self()
	next := (me + 1) % n
	const k = 40
	s, err := splitc.AllSpreadMalloc[T](m, 5*k*n)
	if err != nil {
		return err
	}
	// Element (kind*k + j)*n + pe is on pe: kind 0 written, 1 put, 2 stored.
	at := func(kind, j, pe int) splitc.Global[T] { return s.At((kind*k+j)*n + pe) }
	for j := range k {
		if err := splitc.Write(m, at(0, j, next), val(me, j)); err != nil {
			return err
		}
		if err := splitc.Put(m, at(1, j, next), val(me, j+1)); err != nil {
			return err
		}
		if err := splitc.Store(m, at(2, j, next), val(me, j+2)); err != nil {
			return err
		}
	}
	if err := splitc.Sync(m); err != nil {
		return err
	}
	var zero T
	size := int(sizeOf(zero))
	if err := splitc.StoreSync(m, k*size); err != nil {
		return err
	}
	if err := splitc.Barrier(p); err != nil {
		return err
	}
	prev := (me + n - 1) % n
	got := make([]T, k)
	var c splitc.Counter
	for j := range k {
		if err := splitc.GetCtr(m, &got[j], at(1, j, me), &c); err != nil {
			return err
		}
	}
	if err := splitc.SyncCtr(m, &c); err != nil {
		return err
	}
	for j := range k {
		if v, err := splitc.Read(m, at(0, j, me)); err != nil || v != val(prev, j) {
			t.Errorf("PE %d: written element %d reads %v (%v), want %v", me, j, v, err, val(prev, j))
		}
		if got[j] != val(prev, j+1) {
			t.Errorf("PE %d: put element %d got %v, want %v", me, j, got[j], val(prev, j+1))
		}
		var x T
		if err := splitc.Get(m, &x, at(2, j, next)); err != nil {
			return err
		}
		if err := splitc.Sync(m); err != nil {
			return err
		}
		if x != val(me, j+2) {
			t.Errorf("PE %d: stored element %d on PE %d is %v, want %v", me, j, next, x, val(me, j+2))
		}
	}
	if err := splitc.Barrier(p); err != nil {
		return err
	}
	return splitc.AllSpreadFree(m, s)
}

func TestReadWriteGetPutStore(t *testing.T) {
	gm(t, 3, func(p *papers.PE, m *splitc.Memory) error {
		for _, err := range []error{
			testTypes(t, p, m, func(pe, k int) int8 { return int8(pe*10 + k) }),
			testTypes(t, p, m, func(pe, k int) int16 { return int16(-1000*pe - k) }),
			testTypes(t, p, m, func(pe, k int) int32 { return int32(pe<<20 | k) }),
			testTypes(t, p, m, func(pe, k int) uint64 { return uint64(pe)<<40 | uint64(k) }),
			testTypes(t, p, m, func(pe, k int) float32 { return float32(pe) + float32(k)/8 }),
			testTypes(t, p, m, func(pe, k int) float64 { return math.Pi*float64(pe) - float64(k) }),
		} {
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// TestSplitPhase: gets and puts are outstanding until sync; is_sync polls.
func TestSplitPhase(t *testing.T) {
	gm(t, 2, func(p *papers.PE, m *splitc.Memory) error {
		s, err := splitc.AllSpreadMalloc[int64](m, 2)
		if err != nil {
			return err
		}
		if p.Self() == 0 {
			if err := splitc.Put(m, s.At(1), 42); err != nil {
				return err
			}
			done, err := splitc.IsSync(m)
			for err == nil && !done { // PE 1 answers from its barrier
				done, err = splitc.IsSync(m)
			}
			if err != nil {
				return err
			}
			var x int64
			if err := splitc.Get(m, &x, s.At(1)); err != nil {
				return err
			}
			if err := splitc.Sync(m); err != nil || x != 42 {
				t.Errorf("get after put: %d, %v", x, err)
			}
		}
		return splitc.Barrier(p)
	})
}

func TestBulk(t *testing.T) {
	const k = 3000 // 12 kB: several packets
	gm(t, 2, func(p *papers.PE, m *splitc.Memory) error {
		s, err := splitc.AllSpreadMalloc[int32](m, 2*2*k)
		if err != nil {
			return err
		}
		other := 1 - p.Self()
		src := make([]int32, k)
		for i := range src {
			src[i] = int32(p.Self()*1e6 + i)
		}
		// Each PE's part is 2k elements: [0,k) written, [k,2k) stored.
		base := s.At(other) // element 0 of the other PE's part
		if err := splitc.BulkWrite(m, base, src); err != nil {
			return err
		}
		if err := splitc.BulkStore(m, base.Add(k), src); err != nil {
			return err
		}
		if err := splitc.AllStoreSync(m); err != nil {
			return err
		}
		got := make([]int32, 2*k)
		if err := splitc.BulkRead(m, got[:k], base); err != nil {
			return err
		}
		if err := splitc.BulkGet(m, got[k:], base.Add(k)); err != nil {
			return err
		}
		if err := splitc.Sync(m); err != nil {
			return err
		}
		for i, v := range got {
			if want := int32(p.Self()*1e6 + i%k); v != want {
				t.Fatalf("PE %d: element %d of the round trip is %d, want %d", p.Self(), i, v, want)
			}
		}
		mine := splitc.Local(m, s)
		for i, v := range mine {
			if want := int32(other*1e6 + i%k); v != want {
				t.Fatalf("PE %d: local element %d is %d, want %d", p.Self(), i, v, want)
			}
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		// bulk_put from a reused buffer, counted.
		var c splitc.Counter
		for i := range src {
			src[i] = -src[i]
		}
		if err := splitc.BulkPutCtr(m, base, src, &c); err != nil {
			return err
		}
		if err := splitc.SyncCtr(m, &c); err != nil {
			return err
		}
		return splitc.Barrier(p)
	})
}

// TestAtomics: every PE adds to, swaps and locks counters on PE 0; the
// handlers run atomically, so no update is lost.
func TestAtomics(t *testing.T) {
	const k = 200
	const n = 4
	gm(t, n, func(p *papers.PE, m *splitc.Memory) error {
		s, err := splitc.AllSpreadMalloc[int32](m, 3*n) // on PE 0: 0 sum, n lock, 2n winner
		if err != nil {
			return err
		}
		double := splitc.NewAtomic(m, func(loc *int32, a, _ uint64) uint64 {
			old := *loc
			*loc = 2**loc + int32(a)
			return uint64(old)
		})
		for range k {
			if _, err := splitc.FetchAndAdd(m, s.At(0), 1); err != nil {
				return err
			}
		}
		won, err := splitc.CmpAndSwap(m, s.At(2*n), 0, int32(p.Self()+1))
		if err != nil {
			return err
		}
		wins, err := splitc.AllReduceToOneAdd(p, map[bool]int32{true: 1}[won])
		if err != nil {
			return err
		}
		if wins != 1 {
			t.Errorf("%d PEs won the compare-and-swap, want 1", wins)
		}
		// A test-and-set lock around a read-modify-write in two round trips.
		for range 20 {
			for {
				old, err := splitc.SetFlag(m, s.At(n))
				if err != nil {
					return err
				}
				if old == 0 {
					break
				}
			}
			v, err := splitc.Read(m, s.At(0))
			if err != nil {
				return err
			}
			if err := splitc.Write(m, s.At(0), v+1); err != nil {
				return err
			}
			if _, err := splitc.Exchange(m, s.At(n), 0); err != nil {
				return err
			}
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		if p.Self() == 0 {
			if v := splitc.Local(m, s)[0]; v != n*(k+20) {
				t.Errorf("after %d fetch_and_adds and %d locked increments per PE on %d PEs: %d, want %d", k, 20, n, v, n*(k+20))
			}
			old, err := splitc.Atomic(m, double, s.At(0), 1, 0)
			if err != nil || int32(old) != n*(k+20) || splitc.Local(m, s)[0] != 2*n*(k+20)+1 {
				t.Errorf("user atomic: old %d, now %d, %v", int32(old), splitc.Local(m, s)[0], err)
			}
		}
		return splitc.Barrier(p)
	})
}

func TestBadPointers(t *testing.T) {
	gm(t, 2, func(p *papers.PE, m *splitc.Memory) error {
		s, err := splitc.AllSpreadMalloc[int32](m, 4)
		if err != nil {
			return err
		}
		if _, err := splitc.Read(m, splitc.Global[int32]{}); !errors.Is(err, papers.ErrArgument) {
			t.Errorf("read of nil: %v", err)
		}
		if _, err := splitc.Read(m, s.At(3).Add(5)); err == nil || !strings.Contains(err.Error(), "no global memory") {
			t.Errorf("read past the end on PE 1: %v", err)
		}
		if _, err := splitc.AllSpreadMalloc[int32](m, 0); !errors.Is(err, papers.ErrArgument) {
			t.Errorf("malloc of 0: %v", err)
		}
		if err := splitc.AllSpreadFree(m, s); err != nil {
			return err
		}
		if err := splitc.Barrier(p); err != nil { // the other PE has freed it too
			return err
		}
		if err := splitc.Put(m, s.At(1-p.Self()), 1); err != nil {
			return err
		}
		if err := splitc.Sync(m); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("PE %d has no global memory", 1-p.Self())) {
			t.Errorf("put to a freed array: %v", err)
		}
		if err := splitc.AllSpreadFree(m, s); !errors.Is(err, papers.ErrArgument) {
			t.Errorf("free twice: %v", err)
		}
		return splitc.Barrier(p)
	})
}

// TestReturnedPEServes: a PE whose program returns keeps serving its
// global memory until every PE has returned (as OpenSHMEM's finalize and
// UPC's exit barrier do), so the others' reads of it still work; the
// first PE to meet the board afterwards is told that it returned, naming
// it, and the run fails: it did not end together.
func TestReturnedPEServes(t *testing.T) {
	const reads = 200
	var got, wrong int
	var barrierErr error
	err := emulate.Run(2, papers.Config{Timeout: 20 * time.Second}, func(p *papers.PE) error {
		m, err := splitc.Attach(p)
		if err != nil {
			return err
		}
		s, err := splitc.AllSpreadMalloc[int32](m, 2)
		if err != nil {
			return err
		}
		splitc.Local(m, s)[0] = int32(40 + p.Self())
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		if p.Self() == 1 {
			return nil
		}
		for range reads {
			v, err := splitc.Read(m, s.At(1))
			if err != nil {
				return err
			}
			if got++; v != 41 {
				wrong++
			}
		}
		barrierErr = splitc.Barrier(p)
		return nil
	})
	if got != reads || wrong != 0 {
		t.Fatalf("%d reads of the returned PE's memory, %d wrong; want %d right (run: %v)", got, wrong, reads, err)
	}
	var ie *papers.InterruptError
	if !errors.As(barrierErr, &ie) || ie.Returned != 1<<1 {
		t.Errorf("PE 0's barrier after PE 1 returned: %v; want an *InterruptError naming PE 1 returned", barrierErr)
	}
	if !errors.As(err, &ie) || ie.Returned != 1<<1 || ie.PE != 1 {
		t.Errorf("run: %v; want PE 1's end to fail: PE 0 went on after it returned", err)
	}
}

// TestZeroAllocs: read, write, get, put and store of another PE's memory,
// their bulk forms and an atomic procedure allocate nothing.
func TestZeroAllocs(t *testing.T) {
	gm(t, 2, func(p *papers.PE, m *splitc.Memory) error {
		s, err := splitc.AllSpreadMalloc[float64](m, 2*1025)
		if err != nil {
			return err
		}
		sum, err := splitc.AllSpreadMalloc[int64](m, 2)
		if err != nil {
			return err
		}
		if p.Self() == 1 {
			return splitc.Barrier(p) // answering meanwhile
		}
		g, gb := s.At(1), s.At(3) // PE 1's element 0 for the scalars, 1 to 1024 for the bulk forms
		var x float64
		buf := make([]float64, 1024)
		var failed error
		note := func(err error) {
			if err != nil && failed == nil {
				failed = err
			}
		}
		for name, op := range map[string]func(){
			"read":          func() { _, err := splitc.Read(m, g); note(err) },
			"write":         func() { note(splitc.Write(m, g, 1)) },
			"get":           func() { note(splitc.Get(m, &x, g)); note(splitc.Sync(m)) },
			"put":           func() { note(splitc.Put(m, g, 2)); note(splitc.Sync(m)) },
			"store":         func() { note(splitc.Store(m, g, 3)) },
			"bulk_read":     func() { note(splitc.BulkRead(m, buf, gb)) },
			"bulk_write":    func() { note(splitc.BulkWrite(m, gb, buf)) },
			"bulk_get":      func() { note(splitc.BulkGet(m, buf, gb)); note(splitc.Sync(m)) },
			"bulk_put":      func() { note(splitc.BulkPut(m, gb, buf)); note(splitc.Sync(m)) },
			"bulk_store":    func() { note(splitc.BulkStore(m, gb, buf)) },
			"fetch_and_add": func() { _, err := splitc.FetchAndAdd(m, sum.At(1), 1); note(err) },
		} {
			if a := testing.AllocsPerRun(200, op); a != 0 {
				t.Errorf("%s allocates %v times", name, a)
			}
		}
		if failed != nil {
			return failed
		}
		return splitc.Barrier(p)
	})
}

func sizeOf[T splitc.Number](v T) uintptr { return unsafe.Sizeof(v) }

// TestStress has 8 PEs mix every kind of operation on random PEs at once:
// fetch_and_adds that must all count, puts and stores each PE makes to
// its own slots of every PE, gets and reads of them, and bulk transfers —
// so inboxes fill, replies wait in queues and slots are reused.
func TestStress(t *testing.T) {
	const n, rounds = 8, 300
	gm(t, n, func(p *papers.PE, m *splitc.Memory) error {
		me := p.Self()
		sum, err := splitc.AllSpreadMalloc[int64](m, n)
		if err != nil {
			return err
		}
		slots, err := splitc.AllSpreadMalloc[int32](m, n*n*2) // PE q's part: [writer*2+0] put, [writer*2+1] stored
		if err != nil {
			return err
		}
		blk, err := splitc.AllSpreadMalloc[uint16](m, n*n*100) // PE q's part: 100 per writer
		if err != nil {
			return err
		}
		slot := func(q, writer, k int) splitc.Global[int32] { return slots.At(q).Add(writer*2 + k) }
		rng := uint32(me*7919 + 1)
		next := func(k int) int { rng = rng*1664525 + 1013904223; return int(rng>>16) % k }
		var got int32
		buf := make([]uint16, 100)
		for r := range rounds {
			q := next(n)
			if _, err := splitc.FetchAndAdd(m, sum.At(q), int64(me+1)); err != nil {
				return err
			}
			if err := splitc.Put(m, slot(q, me, 0), int32(r)); err != nil {
				return err
			}
			if err := splitc.Store(m, slot(q, me, 1), int32(r)); err != nil {
				return err
			}
			if err := splitc.Get(m, &got, slot(next(n), next(n), 0)); err != nil {
				return err
			}
			if r%50 == 0 {
				for i := range buf {
					buf[i] = uint16(me*1000 + r + i)
				}
				if err := splitc.BulkPut(m, blk.At(q).Add(me*100), buf); err != nil {
					return err
				}
			}
			if r%7 == 0 {
				if err := splitc.Sync(m); err != nil {
					return err
				}
			}
		}
		if err := splitc.Sync(m); err != nil {
			return err
		}
		if err := splitc.AllStoreSync(m); err != nil {
			return err
		}
		total, err := splitc.AllReduceToOneAdd(p, splitc.Local(m, sum)[0])
		if err != nil {
			return err
		}
		if want := int64(rounds * n * (n + 1) / 2); total != want {
			t.Errorf("PE %d: the fetch_and_adds sum to %d, want %d", me, total, want)
		}
		return splitc.Barrier(p)
	})
}

// TestLockByWrite is Split-C's lock: an atomic test-and-set to take it, a
// write of 0 to give it back. The write is one-sided where the transport
// reaches the owner's memory, while the others' test-and-sets run on the
// owner (PE 0, which only answers) — here a slow one of the program's own
// (NewAtomic), so that releases land while it runs: a release that fell
// between its read and its write would be lost and leave the lock held for
// good, and two PEs holding it at once would lose updates of the counter
// it guards.
func TestLockByWrite(t *testing.T) {
	const n, rounds = 4, 40
	gm(t, n, func(p *papers.PE, m *splitc.Memory) error {
		slowTestAndSet := splitc.NewAtomic(m, func(loc *int32, _, _ uint64) uint64 {
			old := *loc
			for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
			}
			*loc = 1
			return uint64(old)
		})
		lock, err := splitc.AllSpreadMalloc[int32](m, n)
		if err != nil {
			return err
		}
		count, err := splitc.AllSpreadMalloc[int64](m, n)
		if err != nil {
			return err
		}
		l, c := lock.At(0), count.At(1)
		for range rounds * min(p.Self(), 1) {
			for start := time.Now(); ; {
				if time.Since(start) > 10*time.Second {
					return fmt.Errorf("PE %d: the lock was not released in 10s: a release was lost", p.Self())
				}
				old, err := splitc.Atomic(m, slowTestAndSet, l, 0, 0)
				if err != nil {
					return err
				}
				if old == 0 {
					break
				}
			}
			v, err := splitc.Read(m, c)
			if err != nil {
				return err
			}
			if err := splitc.Write(m, c, v+1); err != nil {
				return err
			}
			if err := splitc.Write(m, l, 0); err != nil {
				return err
			}
		}
		if err := splitc.Barrier(p); err != nil {
			return err
		}
		if v, err := splitc.Read(m, c); err != nil {
			return err
		} else if v != (n-1)*rounds {
			t.Errorf("PE %d: the counter the lock guards is %d, want %d", p.Self(), v, (n-1)*rounds)
		}
		return splitc.Barrier(p)
	})
}
