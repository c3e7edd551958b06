package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/ttlpapers/ttlpapers/internal/stop"
	"github.com/ttlpapers/ttlpapers/launch"
)

func init() {
	register(&command{name: "run", summary: "run an SPMD program as N processes on a shared-memory emulated board", run: runRun})
}

func runRun(args []string) int {
	fs := flag.NewFlagSet("papersctl run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: papersctl run -n N [flags] -- PROGRAM [ARGS]\n\n"+
			"Starts N processes of PROGRAM as PEs 0..N-1 of an emulated board in shared memory\n"+
			"(PAPERS_PE, PAPERS_PES and PAPERS_BOARD are set for each; see docs/spmd.md).\n"+
			"Exits with the status of the first PE that failed.\n\nflags:\n")
		fs.PrintDefaults()
	}
	var cfg launch.Config
	fs.IntVar(&cfg.N, "n", 0, "number of processes (PEs) to start, 1 to 32")
	fs.StringVar(&cfg.Board, "board", "", "name of the board to create or share (default: a fresh, unique board)")
	fs.StringVar(&cfg.Dir, "dir", launch.DefaultDir, "directory for board files")
	fs.IntVar(&cfg.PEs, "pes", 0, "PEs on the board when this run creates it (default: n); with -first, lets several runs share a -board")
	fs.IntVar(&cfg.First, "first", 0, "id of the first PE this run starts")
	fs.DurationVar(&cfg.OpenTimeout, "open-timeout", launch.DefaultOpenTimeout, "how long a PE may take to open the board")
	fs.DurationVar(&cfg.Grace, "grace", launch.DefaultGrace, "after a PE fails, how long the others get to exit before they are killed")
	fs.DurationVar(&cfg.Timeout, "timeout", 0, "passed to every PE as PAPERS_TIMEOUT (bound on each wait)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.N == 0 {
		fmt.Fprintln(os.Stderr, "papersctl run: give the number of PEs with -n (1 to 32)")
		fs.Usage()
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(os.Stderr, "papersctl run: no program: write papersctl run -n N -- PROGRAM [ARGS]")
		return 2
	}
	cfg.Program, cfg.Args = rest[0], rest[1:]
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, stop.Signals...)
	defer signal.Stop(sigs)
	cfg.Signals = sigs
	rep, err := launch.Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl run: %v\n", err)
		return 2
	}
	if rep.Failed >= 0 {
		fmt.Fprintf(os.Stderr, "papersctl run: %s\n", rep.Reason)
	}
	return rep.Status
}
