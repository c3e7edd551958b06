// Package dataconf is the behaviour the data network (package am, and
// Split-C's global memory and Strata's active messages on it) must show on
// every transport, written once, as package conformance is for the board:
// each Case is a PE program that checks its own results and returns an
// error saying what differed. Its tests run it in-process; tests/ runs it
// as the processes of papersctl run (the shared-memory transport), and
// package mpi's tests under mpirun (the MPI transport). A case works on 2
// PEs or more.
package dataconf

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
	"github.com/ttlpapers/ttlpapers/strata"
)

// Case is one behaviour: Run runs on every PE of the program.
type Case struct {
	Name string
	Run  func(p *papers.PE) error
}

// Cases returns every case, in the order to run them.
func Cases() []Case {
	return []Case{
		{"am-request-reply", requestReply},
		{"am-packets", packets},
		{"splitc-global-memory", globalMemory},
		{"strata-messages-and-blocks", strataNet},
	}
}

// rounds of request–reply per PE, enough to wrap a transport's buffers.
const rounds = 3000

// requestReply: every PE sends rounds requests to the next PE, whose
// handler replies with its argument plus the replier's id; the replies add
// up to a known sum.
func requestReply(p *papers.PE) error {
	ep, err := am.Of(p)
	if err != nil {
		return err
	}
	me, n := p.Self(), p.PEs()
	next := (me + 1) % n
	var got, sum uint64
	hRep := ep.Register(func(m *am.Msg) { got++; sum += m.Args[0] })
	hReq := ep.Register(func(m *am.Msg) {
		m.Reply(hRep, am.Args{m.Args[0] + uint64(m.Endpoint().Self())})
	})
	var want uint64
	for i := range uint64(rounds) {
		if err := ep.Request(next, hReq, am.Args{i}); err != nil {
			return err
		}
		want += i + uint64(next)
	}
	if err := ep.Wait("replies", next, func() bool { return got == rounds }); err != nil {
		return err
	}
	if sum != want {
		return fmt.Errorf("replies add up to %d, want %d", sum, want)
	}
	return am.Barrier(p)
}

// packets: every PE sends the next one packets whose argument words are
// each pattern of zero and non-zero (a transport may leave zero words out)
// and whose payloads run from none to MaxMedium bytes, on both networks;
// the receiver checks each, and that each network's arrive in order.
func packets(p *papers.PE) error {
	ep, err := am.Of(p)
	if err != nil {
		return err
	}
	me, n := p.Self(), p.PEs()
	next, prev := (me+1)%n, (me+n-1)%n
	const count = 64 // each network: four times the 16 patterns
	args := func(i int) (a am.Args) {
		for w := range a {
			if i>>w&1 != 0 {
				a[w] = uint64(i+1)<<(16*w) | uint64(w)<<60
			}
		}
		return a
	}
	payload := func(i int, b []byte) []byte {
		b = b[:i*(am.MaxMedium+1)/count%(am.MaxMedium+1)]
		for k := range b {
			b[k] = byte(i + 7*k)
		}
		return b
	}
	var buf [am.MaxMedium]byte
	var got [2]int
	var bad error
	h := ep.Register(func(m *am.Msg) {
		i := got[m.Net]
		got[m.Net]++
		if bad == nil && (m.Src != prev || m.Args != args(i) || string(m.Payload) != string(payload(i, buf[:]))) {
			bad = fmt.Errorf("packet %d on the %s network from PE %d: args %x, %d payload bytes; want PE %d, args %x, %d bytes",
				i, m.Net, m.Src, m.Args, len(m.Payload), prev, args(i), len(payload(i, buf[:])))
		}
	})
	if err := am.Barrier(p); err != nil { // every PE has h
		return err
	}
	var out [am.MaxMedium]byte
	for i := range count {
		for _, net := range []am.Net{am.Left, am.Right} {
			if err := ep.Send(next, net, false, am.PollBoth, h, args(i), payload(i, out[:])); err != nil {
				return err
			}
		}
	}
	if err := ep.Wait("packets", prev, func() bool { return got == [2]int{count, count} || bad != nil }); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	return am.Barrier(p)
}

// globalMemory: blocking read and write, split-phase get and put, stores
// with all_store_sync, a bulk transfer of many packets, and fetch_and_add
// from every PE on one word, on a spread array.
func globalMemory(p *papers.PE) error {
	m, err := splitc.Attach(p)
	if err != nil {
		return err
	}
	g := &spreadCheck{p: p, m: m, me: p.Self(), n: p.PEs()}
	if g.s, err = splitc.AllSpreadMalloc[int64](m, g.n*wordsPerPE); err != nil {
		return err
	}
	g.next, g.prev = (g.me+1)%g.n, (g.me+g.n-1)%g.n
	g.local = splitc.Local(m, g.s)
	for _, step := range []func() error{g.scalars, g.bulk, g.fetchAndAdd} {
		if err := step(); err != nil {
			return err
		}
	}
	return splitc.AllSpreadFree(m, g.s)
}

// wordsPerPE is each PE's part of globalMemory's spread array: a bulk
// transfer of 8 KiB.
const wordsPerPE = 1024

// spreadCheck is globalMemory on one PE: each step writes the next PE's
// part and checks what the previous PE wrote into this one's.
type spreadCheck struct {
	p          *papers.PE
	m          *splitc.Memory
	s          splitc.Spread[int64]
	local      []int64 // this PE's part
	me, n      int
	next, prev int
}

// at is word k of PE pe's part: global-pointer arithmetic stays on the PE.
func (g *spreadCheck) at(pe, k int) splitc.Global[int64] { return g.s.At(pe).Add(k) }

// scalars: a blocking write, a split-phase put and a store into the next
// PE's part, then a get and a read back.
func (g *spreadCheck) scalars() error {
	m, me, next, prev := g.m, g.me, g.next, g.prev
	if err := splitc.Write(m, g.at(next, 0), int64(1000+me)); err != nil {
		return err
	}
	if err := splitc.Put(m, g.at(next, 1), int64(2000+me)); err != nil {
		return err
	}
	if err := splitc.Store(m, g.at(next, 2), int64(3000+me)); err != nil {
		return err
	}
	if err := splitc.Sync(m); err != nil {
		return err
	}
	if err := splitc.AllStoreSync(m); err != nil {
		return err
	}
	for k, want := range []int64{int64(1000 + prev), int64(2000 + prev), int64(3000 + prev)} {
		if g.local[k] != want {
			return fmt.Errorf("word %d of this PE's part is %d, want %d from PE %d", k, g.local[k], want, prev)
		}
	}
	var v int64
	if err := splitc.Get(m, &v, g.at(next, 2)); err != nil {
		return err
	}
	if err := splitc.Sync(m); err != nil {
		return err
	}
	if r, err := splitc.Read(m, g.at(next, 0)); err != nil || r != int64(1000+me) || v != int64(3000+me) {
		return fmt.Errorf("read %d (%v) and get %d of PE %d, want %d and %d", r, err, v, next, 1000+me, 3000+me)
	}
	return splitc.Barrier(g.p)
}

// bulk: the next PE's part in one read (many packets), then this PE's
// numbers written into it in one write.
func (g *spreadCheck) bulk() error {
	m, me, next, prev, per := g.m, g.me, g.next, g.prev, wordsPerPE
	for k := range g.local {
		g.local[k] = int64(me*per + k)
	}
	if err := splitc.Barrier(g.p); err != nil {
		return err
	}
	blk := make([]int64, per)
	if err := splitc.BulkRead(m, blk, g.at(next, 0)); err != nil {
		return err
	}
	for k, w := range blk {
		if w != int64(next*per+k) {
			return fmt.Errorf("bulk read word %d of PE %d: %d, want %d", k, next, w, next*per+k)
		}
	}
	for k := range blk {
		blk[k] = int64(-me*per - k)
	}
	if err := splitc.Barrier(g.p); err != nil {
		return err
	}
	if err := splitc.BulkWrite(m, g.at(next, 0), blk[:per-1]); err != nil {
		return err
	}
	if err := splitc.Barrier(g.p); err != nil {
		return err
	}
	for k, w := range g.local[:per-1] {
		if w != int64(-prev*per-k) {
			return fmt.Errorf("after PE %d's bulk write word %d is %d, want %d", prev, k, w, -prev*per-k)
		}
	}
	return nil
}

// fetchAndAdd: every PE adds its id+1 to the last word of PE 0's part.
func (g *spreadCheck) fetchAndAdd() error {
	me, n, per := g.me, g.n, wordsPerPE
	g.local[per-1] = 0
	if err := splitc.Barrier(g.p); err != nil {
		return err
	}
	old, err := splitc.FetchAndAdd(g.m, g.at(0, per-1), int64(me+1))
	if err != nil {
		return err
	}
	if old < 0 || old > int64(n*(n+1)/2-me-1) {
		return fmt.Errorf("fetch_and_add returned %d, not a partial sum of the others' additions", old)
	}
	if err := splitc.Barrier(g.p); err != nil {
		return err
	}
	if me == 0 {
		if want := int64(n * (n + 1) / 2); g.local[per-1] != want {
			return fmt.Errorf("after fetch_and_add by every PE the word is %d, want %d", g.local[per-1], want)
		}
	}
	return nil
}

// strataNet: §6's active messages and §7's block transfer into a port,
// from every PE to the next, acknowledged by the port's handler.
func strataNet(p *papers.PE) error {
	s, err := strata.Init(p)
	if err != nil {
		return err
	}
	me, n := s.Self(), s.PartitionSize()
	next := (me + 1) % n
	var sum strata.Word
	h, err := s.RegisterHandler(func(_ *strata.S, a [4]strata.Word) { sum += a[0] + a[1] + a[2] + a[3] })
	if err != nil {
		return err
	}
	done := false
	const words, port = 5000, 7
	buf := make([]strata.Word, words)
	pt := s.Port(port)
	pt.Base, pt.Count = buf, words
	pt.Handler = func(*strata.S, [4]strata.Word) { done = true }
	if err := s.Barrier(); err != nil { // every port is set up
		return err
	}
	if err := s.SendLeftPollBoth(next, h, 1, 2, 3, strata.Word(me)); err != nil {
		return err
	}
	blk := make([]strata.Word, words)
	for k := range blk {
		blk[k] = strata.Word(me*words + k)
	}
	if err := s.SendBlockXferPollBoth(next, port, 0, blk); err != nil {
		return err
	}
	for !done || sum == 0 {
		if err := s.PollBoth(); err != nil {
			return err
		}
	}
	prev := (me + n - 1) % n
	if sum != strata.Word(6+prev) {
		return fmt.Errorf("handler's arguments added up to %d, want %d", sum, 6+prev)
	}
	for k, w := range buf {
		if w != strata.Word(prev*words+k) {
			return fmt.Errorf("port %d word %d is %d, want %d from PE %d", port, k, w, prev*words+k, prev)
		}
	}
	return s.Barrier()
}

// Victim is the fault case: after a barrier, PE victim calls act (which
// stops or kills its process) while every other PE adds to a word of its
// global memory (fetch_and_add, which the owner's handler runs) until that
// fails; their error must name it. (A read may not need the owner: on a
// transport with one-sided access it reads a stopped PE's memory.)
func Victim(p *papers.PE, victim int, act func()) error {
	m, err := splitc.Attach(p)
	if err != nil {
		return err
	}
	s, err := splitc.AllSpreadMalloc[int64](m, p.PEs())
	if err != nil {
		return err
	}
	if err := splitc.Barrier(p); err != nil {
		return err
	}
	if p.Self() == victim {
		act()
	}
	for i := 0; ; i++ {
		if _, err := splitc.FetchAndAdd(m, s.At(victim), 1); err != nil {
			return fmt.Errorf("after %d additions: %w", i, err)
		}
	}
}
