package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/stop"
)

func init() {
	register(&command{name: "hil", summary: "run papersctl in N QEMU machines wired to one emulated board", run: runHIL})
}

func runHIL(args []string) int {
	fl := flag.NewFlagSet("hil", flag.ContinueOnError)
	n := fl.Int("n", 1, "machines (PEs), 1 to 32")
	var faults stringList
	fl.Var(&faults, "inject", "board fault, e.g. PE2.D6=stuck0 or PE1=unplugged (repeatable)")
	timeout := fl.Duration("timeout", 5*time.Minute, "per-machine limit from boot to power-off")
	memory := fl.String("memory", "192M", "RAM per machine")
	binary := fl.String("binary", "", "static papersctl for the machines (default: this one if built with CGO_ENABLED=0, else build ./cmd/papersctl)")
	guest := fl.Bool("guest", false, "internal: act as init inside a machine")
	pe := fl.Int("pe", 0, "internal (with --guest): this machine's PE")
	pes := fl.Int("pes", 1, "internal (with --guest): number of machines")
	fl.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: papersctl hil [-n N] [--inject FAULT ...] [--timeout D] -- COMMAND [ARGS ...]\n\n"+
			"Boots N QEMU machines (Debian kernel, TCG) whose parallel ports at 0x378 are PEs 0..N-1 of one\n"+
			"emulated board, runs 'papersctl COMMAND ARGS' in each ({pe} and {pes} in ARGS become the\n"+
			"machine's PE and N), prints each console prefixed with pe<k>| and exits 0 when all commands do.\n"+
			"Example: papersctl hil -n 4 -- selftest --port 0x378 --pe {pe} --pes {pes}\n\nflags:")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *guest {
		if err := hil.Guest(*pe, *pes); err != nil {
			fmt.Fprintln(os.Stderr, "papersctl hil:", err)
		}
		return 1
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), stop.Signals...)
	defer stop()
	bin := *binary
	if bin == "" {
		bin = hil.StaticSelf()
	}
	if bin == "" {
		dir, err := os.MkdirTemp("", "ttlpapers-hil-build-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "papersctl hil:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "papersctl")
		fmt.Fprintln(os.Stderr, "papersctl hil: building a static papersctl (CGO_ENABLED=0) from the module in the current directory")
		if err := hil.BuildPapersctl(ctx, ".", bin); err != nil {
			fmt.Fprintln(os.Stderr, "papersctl hil:", err, "\n(run from the ttlpapers source tree, or pass --binary)")
			return 1
		}
	}
	res, err := hil.Run(ctx, hil.Config{
		N: *n, Faults: faults, Args: fl.Args(), Binary: bin,
		Timeout: *timeout, Memory: *memory, Output: os.Stdout,
	})
	if res != nil {
		fmt.Fprint(os.Stderr, res.Summary())
		fmt.Fprintf(os.Stderr, "total %v\n", res.Wall.Round(time.Millisecond))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "papersctl hil:", err)
		return 1
	}
	if !res.OK() {
		return 1
	}
	return 0
}
