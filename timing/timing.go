// Package timing shows the seed's two NAND races on timed emulated boards.
//
// A TTL_PAPERS NAND costs 5 port operations where 2 would carry the data
// (seed §4.4): (a) a PE's data and strobes leave on the same write and race
// through the cables and the board, and the board's NAND outputs, each
// driving a line of every cable, switch slowly — so the read that sees the
// barrier complete may still see the old NAND, and the driver reads the
// status again (the resample); (b) a fast PE may change its data for the
// next NAND before a slow PE has read this one, so a trailing barrier
// follows. Trial runs one randomized trial of one protocol variant on an
// timed.Board — the shipped variants are the real papers driver — and
// Run and Margins count the failures over many: under realistic defaults
// every variant without both safeguards fails at a measurable rate and the
// driver never does, and the margins say how long a cable, how much skew
// and how fast a port each variant survives.
package timing

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/field"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Params describe the trials: the cluster, its port hardware and cables,
// and how each trial is drawn.
type Params struct {
	PEs int
	// NANDs is the number of operations of each trial (NANDs, or barriers
	// for the barrier variant; the interrupt variant does one interrupt).
	NANDs int
	// Port is the PCs' port timing.
	Port timed.PortTiming
	// Metres bounds each PE's cable length: drawn from Metres[0] to
	// Metres[1] in every trial.
	Metres [2]float64
	// Skew bounds each cable line's extra delay (timed.Cable).
	Skew time.Duration
	// Wire is the cable per metre; the zero value is timed.DefaultWire.
	Wire timed.Wire
	// Speed is the PEs' spread in speed: each PE's operation time is
	// multiplied by a factor drawn from 1-Speed to 1+Speed.
	Speed float64
	// Delays picks the gates' delays.
	Delays timed.Corner
	// Seed seeds every trial: trial i of every variant draws the same
	// cables, speeds, delays, power-up and data.
	Seed uint64
}

// DefaultParams are the realistic defaults: the seed's 4 PEs on 486 ISA
// ports (1.26 µs per operation, 10 % jitter, an interrupt of 2 to 20 µs in
// 1 % of the operations) with 10-foot cables, 2 ns of skew per line, PEs up
// to 10 % apart in speed, and every gate's delay anywhere between the
// datasheet minimum and maximum.
func DefaultParams() Params {
	return Params{PEs: 4, NANDs: 8, Port: timed.ISA, Metres: [2]float64{timed.TenFeet, timed.TenFeet},
		Skew: 2 * time.Nanosecond, Speed: 0.1, Delays: timed.Spread, Seed: 1}
}

// MaxStallOps bounds a stall in port operations: a PE waiting for a
// stalled one polls about that often, and a wait of 64 polls (two stalls
// in a row, plus a late start) would bring in the driver's interrupt
// check, which is timed by the wall clock.
const MaxStallOps = 25

// Validate reports every problem with p as *field.Error values, joined,
// each naming the setting and the fix.
func (p Params) Validate() error {
	var errs []error
	bad := func(name, format string, args ...any) { errs = append(errs, field.Errorf(name, format, args...)) }
	if p.PEs < 2 || p.PEs > lpt.MaxPEs {
		bad("PEs", "{PEs}: %d PEs: the races need 2 to %d", p.PEs, lpt.MaxPEs)
	}
	if p.NANDs < 1 || p.NANDs > 10000 {
		bad("NANDs", "{NANDs}: %d operations per trial: use 1 to 10000", p.NANDs)
	}
	if !(p.Metres[0] >= 0 && p.Metres[0] <= p.Metres[1] && p.Metres[1] <= timed.MaxCableMetres) {
		bad("Metres", "{Metres}: cable lengths %v to %v m: want 0 <= min <= max <= %d", p.Metres[0], p.Metres[1], timed.MaxCableMetres)
	}
	if p.Skew < 0 || p.Skew > time.Millisecond {
		bad("Skew", "{Skew} %v: a line's skew must be 0 to 1ms", p.Skew)
	}
	if !(p.Speed >= 0 && p.Speed <= 0.5) {
		bad("Speed", "{Speed} %v: the speed spread must be 0 to 0.5 (PEs up to 50 %% apart)", p.Speed)
	}
	if p.Delays > timed.NoDelay {
		bad("Delays", "{Delays} %d: unknown delay corner", p.Delays)
	}
	if err := p.Port.Validate(); err != nil {
		bad("Port", "{Port}: %v", err)
	} else if fast := float64(p.Port.Op) * (1 - p.Speed) * (1 - p.Port.Jitter); float64(p.Port.StallMax) > MaxStallOps*fast {
		bad("Port", "{Port}: stalls up to %v are more than %d of the fastest port operations (%v): a PE stalled that long would run the driver's wall-clock interrupt check; shorten the stalls or slow the port", p.Port.StallMax, MaxStallOps, time.Duration(fast))
	}
	return errors.Join(errs...)
}

// Result counts the failures of one variant over many trials.
type Result struct {
	Op      string `json:"op"`
	Variant string `json:"variant"`
	Ops     int    `json:"ops"`
	Shipped bool   `json:"shipped"`
	Port    string `json:"port"`
	Trials  int    `json:"trials"`
	// Failures is the number of trials with a wrong result on any PE, a
	// stalled PE or an error.
	Failures int `json:"failures"`
	// The wrong results by cause (a trial may have several), and the
	// trials that stalled or failed with an error.
	Stale       int `json:"stale"`
	Overwritten int `json:"overwritten"`
	Early       int `json:"early"`
	WrongCode   int `json:"wrong_code"`
	Stalled     int `json:"stalled"`
	Errors      int `json:"errors"`
	// FirstFailure is the first failing trial, to record with Trial; -1
	// when none failed.
	FirstFailure int    `json:"first_failure"`
	FirstError   string `json:"first_error,omitempty"`
}

// Rate is the fraction of trials that failed.
func (r Result) Rate() float64 { return float64(r.Failures) / float64(max(r.Trials, 1)) }

// Run runs trials 0 to trials-1 of each variant, on every CPU, and counts
// their failures. With stopAtFirst it stops a variant at its first failing
// trial (its counts then cover the trials run).
func Run(ctx context.Context, p Params, variants []Variant, trials int, stopAtFirst bool) ([]Result, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("timing: %w", err)
	}
	if trials < 1 {
		return nil, fmt.Errorf("timing: %d trials: run at least 1", trials)
	}
	var out []Result
	for _, v := range variants {
		res, err := runVariant(ctx, p, v, trials, stopAtFirst)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

func runVariant(ctx context.Context, p Params, v Variant, trials int, stopAtFirst bool) (Result, error) {
	res := Result{Op: v.Op, Variant: v.Name, Ops: v.Ops, Shipped: v.Shipped, Port: p.Port.Name, FirstFailure: -1}
	results := make([]*TrialResult, trials)
	errs := make([]error, trials)
	var (
		mu     sync.Mutex
		next   int
		failed = trials // the first failing trial found so far
		wg     sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				stop := i >= trials || stopAtFirst && i > failed || ctx.Err() != nil
				mu.Unlock()
				if stop {
					return
				}
				results[i], errs[i] = Trial(p, v, i, nil)
				if errs[i] == nil && results[i].Failed {
					mu.Lock()
					failed = min(failed, i)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return res, err
	}
	for i, r := range results {
		if errs[i] != nil {
			return res, errs[i]
		}
		if r == nil || stopAtFirst && i > failed {
			break
		}
		res.add(r)
	}
	return res, nil
}

func (res *Result) add(r *TrialResult) {
	res.Trials++
	if !r.Failed {
		return
	}
	if res.Failures++; res.FirstFailure < 0 {
		res.FirstFailure = r.Trial
		if r.Err != nil {
			res.FirstError = r.Err.Error()
		}
	}
	for _, w := range r.Wrong {
		switch w.Cause {
		case Stale:
			res.Stale++
		case Overwritten:
			res.Overwritten++
		case Early:
			res.Early++
		case WrongCode:
			res.WrongCode++
		}
	}
	if len(r.Stalled) > 0 {
		res.Stalled++
	} else if r.Err != nil {
		res.Errors++
	}
}
