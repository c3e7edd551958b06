// Package runcmd is papersctl run.
package runcmd

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/internal/stop"
	"github.com/ttlpapers/ttlpapers/launch"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Cmd is papersctl run.
var Cmd = &base.Command{Name: "run", Summary: "run an SPMD program as N processes on a shared-memory emulated board",
	Synopsis: "-n N [flags] [--] PROGRAM [ARGS]",
	About: "Starts N processes of PROGRAM as PEs 0..N-1 of an emulated board in shared memory\n" +
		"(PAPERS_PE, PAPERS_PES and PAPERS_PORT are set for each; see docs/spmd.md), like mpirun\n" +
		"(-np N is accepted for -n N). Each PE runs in a process group of its own: ^C, SIGTERM and\n" +
		"SIGHUP are forwarded to every group, and a second one kills them at once. Exits with the\n" +
		"status of the first PE that failed, or 128+n when stopped by signal n (130 for ^C).",
	Args: base.Positional{Synopsis: "PROGRAM [ARGS]", Min: 1, Max: -1, Complete: "files",
		Missing: "no program: write papersctl run -n N -- PROGRAM [ARGS]"},
	New: func() base.Runner { return &runCmd{} }}

type runCmd struct {
	cfg launch.Config
	np  int // mpirun's spelling of -n
}

func (c *runCmd) Define(f *base.FlagSet) {
	f.Int(&c.cfg.N, "n", 0, 1, lpt.MaxPEs, "number of processes (PEs) to start")
	f.Int(&c.np, "np", 0, 1, lpt.MaxPEs, "same as -n, as mpirun spells it")
	f.String(&c.cfg.Board, "board", "", "NAME", checkBoardName, "name of the board to create or share (default: a fresh, unique board)")
	f.NamesValue("board")
	f.Path(&c.cfg.Dir, "dir", launch.DefaultDir, "dir", true, "directory for board files")
	f.Int(&c.cfg.PEs, "pes", 0, 1, lpt.MaxPEs, "PEs on the board when this run creates it (default: first+n); with --first and --board, lets several runs share a board")
	f.Int(&c.cfg.First, "first", 0, 0, lpt.MaxPEs-1, "id of the first PE this run starts (with --board)")
	f.Duration(&c.cfg.OpenTimeout, "open-timeout", launch.DefaultOpenTimeout, false, "how long a PE may take to open the board")
	f.Duration(&c.cfg.Grace, "grace", launch.DefaultGrace, false, "after a PE fails, how long the others get to exit before they are killed")
	f.Duration(&c.cfg.Timeout, "timeout", 0, true, "passed to every PE as PAPERS_TIMEOUT, the bound on each wait (0: the PEs' default)")
}

// runFlags names the flag of each launch.Config field.
var runFlags = map[string]string{"N": "n", "PEs": "pes", "First": "first", "Board": "board", "Dir": "dir",
	"OpenTimeout": "open-timeout", "Grace": "grace", "Timeout": "timeout"}

func (c *runCmd) Check(f *base.FlagSet, args []string) error {
	var p base.Problems
	cfg := &c.cfg
	switch {
	case f.IsSet("n") && f.IsSet("np") && cfg.N != c.np:
		p.Addf("-n %d and -np %d disagree: give one of them", cfg.N, c.np)
		return p.Err()
	case f.IsSet("np"):
		cfg.N = c.np
	case !f.IsSet("n"):
		p.Addf("give the number of PEs with -n N (1 to %d)", lpt.MaxPEs)
		return p.Err()
	}
	v := *cfg
	v.Program = args[0]
	p.AddFields(v.Validate(), runFlags)
	return p.Err()
}

func (c *runCmd) Run(e *base.Env, args []string) error {
	cfg := c.cfg
	cfg.Program, cfg.Args = args[0], args[1:]
	cfg.Stdout, cfg.Stderr = e.Stdout, e.Stderr
	// Room for a second signal that comes before the launcher took the
	// first: signal.Notify drops what does not fit, and the second one is
	// the one that kills at once.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, stop.Signals...)
	defer signal.Stop(sigs)
	cfg.Signals = sigs
	rep, err := launch.Run(e.Ctx, cfg)
	if err != nil {
		return err // its configuration passed Validate in Check
	}
	if rep.Reason != "" {
		fmt.Fprintf(e.Stderr, "papersctl run: %s\n", rep.Reason)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(e.Stderr, "papersctl run: %s\n", n)
	}
	if rep.Status != 0 {
		return base.ExitStatus(rep.Status)
	}
	return nil
}

// checkBoardName checks a --board name before anything starts: the
// launcher's rule (launch.CheckBoard), plus no leading '-', which would
// read as a flag.
func checkBoardName(s string) error {
	if strings.HasPrefix(s, "-") {
		return fmt.Errorf("board name %q starts with '-': use a plain name such as job1", s)
	}
	var bad *emu.NameError
	if errors.As(launch.CheckBoard(s), &bad) {
		return errors.New(bad.Problem())
	}
	return nil
}
