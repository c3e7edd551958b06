//go:build linux

// Command lanbench is the program of the tests' BenchmarkLAN, which runs
// it on emulated hosts, one process each:
//
//	lanbench [-a2a N]        a PE of the TCP data network (spmd)
//	lanbench goserve ADDR    the plain Go TCP pair's server (baseline.GoTCP)
//	lanbench goclient ADDR   its client
//
// With 2 PEs, PE 0 times an active-message round trip and Split-C bulk
// puts and gets of 64 KiB, 1 MiB and 16 MiB to PE 1; the Go client times
// the same operations against its server. Then (PEs only, at any count)
// every PE gets an 8-byte word from every other PE and syncs, N times.
// Each operation is done once untimed first. Every process prints, per
// phase, "PHASE ops=C wall=SECONDS cpu=SECONDS": the wall time of the
// timed operations and the CPU time its process spent on them (a server
// its serving).
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/baseline"
	"github.com/ttlpapers/ttlpapers/papers"
	"github.com/ttlpapers/ttlpapers/splitc"
	"github.com/ttlpapers/ttlpapers/spmd"
)

var a2aIters = flag.Int("a2a", 300, "all-to-alls timed")

// phase is one timed operation of a pair: a round trip (size 0), a bulk
// put or a bulk get of size bytes, count times.
type phase struct {
	name  string
	get   bool
	size  int
	count int
}

const maxBulk = 16 << 20

// phases are the pair's operations, in the order both sides run them.
var phases = func() []phase {
	ps := []phase{{name: "rt", count: 2000}}
	for _, size := range []int{64 << 10, 1 << 20, maxBulk} {
		count := max(4, (64<<20)/size)
		ps = append(ps, phase{fmt.Sprintf("put%dK", size>>10), false, size, count},
			phase{fmt.Sprintf("get%dK", size>>10), true, size, count})
	}
	return ps
}()

const timeout = 20 * time.Second

func main() {
	if len(os.Args) == 3 && (os.Args[1] == "goserve" || os.Args[1] == "goclient") {
		f := goServe
		if os.Args[1] == "goclient" {
			f = goClient
		}
		if err := f(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "lanbench:", err)
			os.Exit(1)
		}
		return
	}
	spmd.Main(run)
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(name string, ops int, wall, cpu time.Duration) {
	fmt.Printf("%s ops=%d wall=%.9f cpu=%.9f\n", name, ops, wall.Seconds(), cpu.Seconds())
}

// goServe serves two connections per phase, the client's untimed
// operation and then its timed ones, and reports the CPU of the second.
func goServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	for _, ph := range phases {
		for timed := range 2 {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			start := cpuTime()
			if err := baseline.ServeGoTCP(c, maxBulk); err != nil {
				return fmt.Errorf("%s: %w", ph.name, err)
			}
			if timed == 1 {
				report(ph.name, ph.count, 0, cpuTime()-start)
			}
		}
	}
	return nil
}

// goClient runs the phases against the server at addr, which it waits
// up to the timeout for.
func goClient(addr string) error {
	block := make([]byte, maxBulk)
	deadline := time.Now().Add(timeout)
	for _, ph := range phases {
		op := func(g *baseline.GoTCP) error {
			switch {
			case ph.size == 0:
				return g.RoundTrip()
			case ph.get:
				return g.Get(block[:ph.size])
			}
			return g.Put(block[:ph.size])
		}
		for timed := range 2 {
			g, err := baseline.DialGoTCP(addr, timeout)
			for err != nil && time.Now().Before(deadline) { // the server may not listen yet
				time.Sleep(20 * time.Millisecond)
				g, err = baseline.DialGoTCP(addr, timeout)
			}
			if err != nil {
				return err
			}
			count := 1
			if timed == 1 {
				count = ph.count
			}
			start, startCPU := time.Now(), cpuTime()
			for range count {
				if err := op(g); err != nil {
					return fmt.Errorf("%s: %w", ph.name, err)
				}
			}
			if timed == 1 {
				report(ph.name, count, time.Since(start), cpuTime()-startCPU)
			}
			g.Close()
		}
	}
	return nil
}

// pe is a PE's side of the phases.
type pe struct {
	p        *papers.PE
	ep       *am.Endpoint
	m        *splitc.Memory
	req, rep am.HandlerID
	stop     am.HandlerID
	replies  int
	stops    int
	dst      splitc.Global[uint64]
	buf      []uint64
}

func run(p *papers.PE) error {
	ep, err := am.Of(p)
	if err != nil {
		return err
	}
	m, err := splitc.Attach(p)
	if err != nil {
		return err
	}
	n, self := p.PEs(), p.Self()
	perPE := 1 // the word every PE gets
	if n == 2 {
		perPE += maxBulk / 8 // and the pair's blocks, after it
	}
	s, err := splitc.AllSpreadMalloc[uint64](m, n*perPE)
	if err != nil {
		return err
	}
	x := &pe{p: p, ep: ep, m: m}
	x.req = ep.Register(func(m *am.Msg) { m.Reply(x.rep, m.Args) })
	x.rep = ep.Register(func(*am.Msg) { x.replies++ })
	x.stop = ep.Register(func(*am.Msg) { x.stops++ })
	if err := am.Barrier(p); err != nil { // every PE has its handlers
		return err
	}
	if n == 2 {
		x.dst, x.buf = s.At(1).Add(1), make([]uint64, maxBulk/8)
		for _, ph := range phases {
			if err := x.pair(ph); err != nil {
				return fmt.Errorf("%s: %w", ph.name, err)
			}
		}
	}
	got := make([]uint64, n)
	a2a := func() error {
		for k := range n {
			if k != self {
				if err := splitc.Get(m, &got[k], s.At(k)); err != nil {
					return err
				}
			}
		}
		return splitc.Sync(m)
	}
	if err := a2a(); err != nil {
		return err
	}
	if err := am.Barrier(p); err != nil {
		return err
	}
	start, startCPU := time.Now(), cpuTime()
	for range *a2aIters {
		if err := a2a(); err != nil {
			return err
		}
	}
	report(fmt.Sprintf("a2a%d", n), *a2aIters, time.Since(start), cpuTime()-startCPU)
	return am.Barrier(p) // answering the others' gets until they are done
}

// pair runs ph: PE 0 does it once, untimed, then count times; PE 1
// serves, and times its serving from the barrier between them to PE 0's
// stop.
func (x *pe) pair(ph phase) error {
	if x.p.Self() == 1 {
		if err := x.serve(); err != nil {
			return err
		}
		if err := am.Barrier(x.p); err != nil {
			return err
		}
		start, startCPU := time.Now(), cpuTime()
		if err := x.serve(); err != nil {
			return err
		}
		report(ph.name, ph.count, time.Since(start), cpuTime()-startCPU)
		return nil
	}
	if err := x.do(ph, 1); err != nil {
		return err
	}
	if err := am.Barrier(x.p); err != nil {
		return err
	}
	start, startCPU := time.Now(), cpuTime()
	if err := x.do(ph, ph.count); err != nil {
		return err
	}
	report(ph.name, ph.count, time.Since(start), cpuTime()-startCPU)
	return nil
}

// serve answers PE 0 until it says stop.
func (x *pe) serve() error {
	want := x.stops + 1
	return x.ep.Wait("serving PE 0", 0, func() bool { return x.stops >= want })
}

// do does ph count times, then tells PE 1 to stop serving.
func (x *pe) do(ph phase, count int) error {
	for range count {
		var err error
		switch {
		case ph.size == 0:
			want := x.replies + 1
			if err = x.ep.Request(1, x.req, am.Args{1}); err == nil {
				err = x.ep.Wait("round trip", 1, func() bool { return x.replies == want })
			}
		case ph.get:
			if err = splitc.BulkGet(x.m, x.buf[:ph.size/8], x.dst); err == nil {
				err = splitc.Sync(x.m)
			}
		default:
			if err = splitc.BulkPut(x.m, x.dst, x.buf[:ph.size/8]); err == nil {
				err = splitc.Sync(x.m)
			}
		}
		if err != nil {
			return err
		}
	}
	return x.ep.Request(1, x.stop, am.Args{})
}
