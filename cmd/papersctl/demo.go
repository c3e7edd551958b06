package main

import (
	"context"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/papers"
)

func init() {
	register(&command{name: "demo", summary: "a small SPMD program: barrier, NAND, broadcast, vote, reductions, checked", run: runDemo})
}

func runDemo(args []string) int {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	port := fl.String("port", "", "printer port base address (e.g. 0x378, or lpt1) to run as one PE; empty: all PEs on the built-in emulator")
	pe := fl.Int("pe", 0, "this PE's number (with --port)")
	pes := fl.Int("pes", 4, "number of PEs")
	bench := fl.Int("bench", 1000, "barriers to time after the checks (0: none)")
	timeout := fl.Duration("timeout", 30*time.Second, "limit for each wait on the other PEs")
	fl.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: papersctl demo [--port 0x378 --pe K] [--pes N] [--bench B]\n\n"+
			"Every PE computes values it can also predict for every other PE, combines them on the\n"+
			"board — 4-bit NAND, 8-bit broadcast from each PE in turn, vote, global max and sum — and\n"+
			"checks each result against the prediction. Exits 1 on a wrong result.\n\nflags:")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	cfg := papers.Config{PE: *pe, PEs: *pes, Timeout: *timeout}
	if *port == "" {
		board, err := emu.New(*pes)
		if err == nil {
			err = emulate.RunOn(board, *pes, cfg, func(p *papers.PE) error { return demo(p, *bench, board) })
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "papersctl demo:", err)
			return 1
		}
		fmt.Println("front panel after the run:", frontPanel(board, *pes))
		return 0
	}
	lp, err := backend.Open("port:" + *port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "papersctl demo:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Context = ctx
	p, err := papers.Open(lp, cfg)
	if err != nil {
		lp.Close() // on success the PE owns the port and closes it
		fmt.Fprintln(os.Stderr, "papersctl demo:", err)
		return 1
	}
	err = demo(p, *bench, nil)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl demo: PE %d: %v\n", *pe, err)
		return 1
	}
	return 0
}

// demoValue is PE k's 8-bit input: every PE can compute everyone's.
func demoValue(k int) uint8 { return uint8((k*73 + 11) % 251) }

// demo is the SPMD program each PE runs; board is the emulated board, nil
// on a real port.
func demo(p *papers.PE, bench int, board *emu.Board) error {
	me, n := p.Self(), p.PEs()
	check := func(what string, got, want uint64) error {
		if got != want {
			return fmt.Errorf("%s = %#x, want %#x", what, got, want)
		}
		return nil
	}
	// The LED shows the seed's "special" status (orange) while the checks
	// run; the driver still turns it red while a barrier waits.
	if err := p.SetLED(papers.Orange); err != nil {
		return err
	}
	if err := showLEDs(p, board); err != nil {
		return err
	}

	// 4-bit NAND (bits 0-1 set everywhere, so the result is not trivially 0xf).
	nybble := func(k int) uint8 { return demoValue(k)&0xc | 0x3 }
	all := uint8(0xf)
	for k := 0; k < n; k++ {
		all &= nybble(k)
	}
	nand, err := p.NAND(nybble(me))
	if err != nil {
		return err
	}
	if err := check("NAND", uint64(nand), uint64(^all&0xf)); err != nil {
		return err
	}

	// 8-bit broadcast from each PE in turn: the root drives its nybble,
	// the others 0xf, and the NAND is the root's nybble complemented.
	for root := 0; root < n; root++ {
		var got uint8
		for shift := 0; shift < 8; shift += 4 {
			x := uint8(0xf)
			if me == root {
				x = demoValue(root) >> shift & 0xf
			}
			r, err := p.NAND(x)
			if err != nil {
				return err
			}
			got |= (^r & 0xf) << shift
		}
		if err := check(fmt.Sprintf("broadcast from PE %d", root), uint64(got), uint64(demoValue(root))); err != nil {
			return err
		}
	}

	// Vote: one bit from every PE.
	var wantVote uint64
	for k := 0; k < n; k++ {
		if demoValue(k)&1 != 0 {
			wantVote |= 1 << k
		}
	}
	vote, err := p.Vote(demoValue(me)&1 != 0)
	if err != nil {
		return err
	}
	if err := check("vote", vote, wantVote); err != nil {
		return err
	}

	// Reductions: the maximum bit-serially with ANY (contenders without the
	// bit drop out), the sum from one vote per bit.
	var max, wantMax, sum, wantSum uint64
	for k := 0; k < n; k++ {
		wantMax = uint64(bigger(uint8(wantMax), demoValue(k)))
		wantSum += uint64(demoValue(k))
	}
	contender := true
	for b := 7; b >= 0; b-- {
		mine := contender && demoValue(me)>>b&1 != 0
		any, err := p.Any(mine)
		if err != nil {
			return err
		}
		if any {
			max |= 1 << b
			contender = mine
		}
	}
	for b := 0; b < 8; b++ {
		m, err := p.Vote(demoValue(me)>>b&1 != 0)
		if err != nil {
			return err
		}
		sum += uint64(bits.OnesCount64(m)) << b
	}
	if err := check("max", max, wantMax); err != nil {
		return err
	}
	if err := check("sum", sum, wantSum); err != nil {
		return err
	}
	fmt.Printf("PE %d of %d: NAND %#x, broadcasts ok, vote %#x, max %d, sum %d: all correct\n", me, n, nand, vote, max, sum)
	if err := p.SetLED(papers.Green); err != nil {
		return err
	}

	if bench > 0 {
		start := time.Now()
		for i := 0; i < bench; i++ {
			if err := p.Barrier(); err != nil {
				return err
			}
		}
		el := time.Since(start)
		fmt.Printf("PE %d: %d barriers in %v: %v per barrier\n", me, bench, el.Round(time.Microsecond), (el / time.Duration(bench)).Round(10*time.Nanosecond))
	}
	return nil
}

// showLEDs has PE 0 print the emulated board's front panel while the others
// wait for it in a barrier (red) and it shows orange, then joins them.
func showLEDs(p *papers.PE, board *emu.Board) error {
	if board != nil && p.Self() == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for k := 1; k < p.PEs(); k++ {
			for board.LED(k) != emu.Red && time.Now().Before(deadline) {
				runtime.Gosched()
			}
		}
		fmt.Println("front panel during the checks:", frontPanel(board, p.PEs()))
	}
	return p.Barrier()
}

func bigger(a, b uint8) uint8 {
	if a > b {
		return a
	}
	return b
}
