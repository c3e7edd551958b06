// Package emulate runs PAPERS programs in this process on emulated boards:
// one goroutine per PE, each with its own emulated printer port (package
// emu), as net/http/httptest sits beside net/http. It is how tests,
// examples and newcomers run a program without hardware. The protocol
// packages (papers, am, strata, splitc) never import the emulator: a program
// that opens its real port with papers.Open does not link it. One built on
// spmd.Main does, since spmd links every way to run, the shared-memory
// emulated board of papersctl run among them.
//
// The same function runs unchanged on the real board (papers.Open on a real
// port, or spmd.Main) and as separate processes on a shared-memory board
// (papersctl run). Each PE here also has an endpoint on an in-process data
// network (package am), which Split-C's global memory and Strata's active
// messages use; papersctl run's processes get one in shared memory
// (spmd/shm) and mpirun's ranks one over MPI (docs/datanet.md).
package emulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Run runs fn as an SPMD program of n PEs on a new in-process emulated
// board: each PE runs fn concurrently with its own *papers.PE, opened with
// cfg (PE and PEs are filled in) and closed when fn returns: with
// papers.PE.Finish when it returns nil, so that the PEs end together and
// prove the run (a census and a test of every data line) before any
// reports success; a PE that returns early keeps answering the data
// network until the others return or meet the board. When one PE
// fails, the others' waits are abandoned at once. The error joins every
// PE's error, each naming its PE once (see RunPorts).
//
// A Strata program runs as Run(n, cfg, strata.Program(fn)).
func Run(n int, cfg papers.Config, fn func(*papers.PE) error) error {
	b, err := emu.New(n)
	if err != nil {
		return fmt.Errorf("emulate: %w", err)
	}
	return RunOn(b, n, cfg, fn)
}

// RunOn is Run on a given emulated board (with faults injected, or built
// from a particular netlist); it runs PEs 0 to n-1.
//
// Each PE also has an endpoint on an in-process data network (am.Of): it
// leaves that network when fn returns — Close, handling what has arrived —
// or fails or panics — Abort —, so that the others' waits on it end in an
// error naming it.
func RunOn(b *emu.Board, n int, cfg papers.Config, fn func(*papers.PE) error) error {
	net, err := am.NewLocal(n)
	if err != nil {
		return fmt.Errorf("emulate: %w", err)
	}
	return runNet(b, n, cfg, func(p *papers.PE) (am.Transport, error) { return net.Transport(p.Self()), nil },
		func(k int, err error) { net.Transport(k).Leave(err, nil) }, fn)
}

// RunNet is RunOn with each PE's data network made by join, once the PE
// has checked in on the board (so that join may use it: a TCP network's
// PEs exchange their addresses there), instead of the in-process one. A
// transport that is an io.Closer is closed once the PE has left it.
func RunNet(b *emu.Board, n int, cfg papers.Config, join func(*papers.PE) (am.Transport, error), fn func(*papers.PE) error) error {
	return runNet(b, n, cfg, join, nil, fn)
}

// runNet is RunNet; failed, if set, is told of a PE that could not check
// in (the in-process network's others must not wait on it).
func runNet(b *emu.Board, n int, cfg papers.Config, join func(*papers.PE) (am.Transport, error), failed func(int, error), fn func(*papers.PE) error) error {
	return RunPorts(cmpCtx(cfg.Context), b, n, func(ctx context.Context, k int, port *emu.Port) (err error) {
		c := cfg
		c.PE, c.PEs, c.Context = k, n, ctx
		c.FreshBoard = true // every PE of this board is one of ours, started now
		p, err := papers.Open(port, c)
		if err != nil {
			if failed != nil {
				failed(k, err)
			}
			return err
		}
		defer p.Close()
		t, err := join(p)
		if err != nil {
			return err
		}
		if cl, ok := t.(io.Closer); ok {
			defer cl.Close()
		}
		ep := am.NewEndpoint(t, am.Options{Timeout: c.Timeout, Context: ctx})
		p.AttachDataNet(ep)
		panicked := true
		defer func() {
			switch {
			case panicked:
				ep.Abort(errors.New("its program panicked"))
			case err != nil:
				ep.Abort(err)
			default:
				// The end of the run answers the data network until every
				// PE has returned, and proves the run (papers.PE.Finish);
				// the endpoint closes after it.
				err = errors.Join(p.Finish(), ep.Close())
			}
		}()
		err = fn(p)
		panicked = false
		return err
	})
}

func cmpCtx(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// RunPorts runs fn once for each of PEs 0 to n-1 of b, concurrently, each
// with its own port, and returns once every one has returned: no goroutine
// outlives the call. The context passed to fn is cancelled as soon as any
// PE returns an error or panics, so the others stop waiting instead of
// running into their deadlines. The result joins every PE's error, each
// naming its PE once: the errors of papers, strata and splitc name it
// already ("papers: PE 3: …"); any other gets "PE 3: " in front. Each
// keeps its chain, so errors.Is and errors.As see through the join.
func RunPorts(ctx context.Context, b *emu.Board, n int, fn func(ctx context.Context, pe int, port *emu.Port) error) error {
	if n < 1 || n > b.PEs() {
		return fmt.Errorf("emulate: cannot run %d PEs on the %d-PE board: use 1 to %d", n, b.PEs(), b.PEs())
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ports := make([]*emu.Port, n)
	for k := range ports {
		port, err := b.Port(k)
		if err != nil {
			for _, p := range ports[:k] {
				p.Close()
			}
			return fmt.Errorf("emulate: %w", err)
		}
		ports[k] = port
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k, port := range ports {
		wg.Go(func() {
			defer port.Close()
			defer func() {
				if r := recover(); r != nil {
					errs[k] = fmt.Errorf("PE %d: panic: %v", k, r)
					cancel(errs[k])
				}
			}()
			if err := fn(ctx, k, port); err != nil {
				errs[k] = papers.NamePE(k, err)
				cancel(errs[k])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
