// Package emucmd is papersctl emu: emu serve and emu fault.
package emucmd

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/boardflag"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/progress"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Cmd is papersctl emu.
var Cmd = &base.Command{Name: "emu", Summary: "serve an emulated board to other programs (emu serve --fuse DIR)",
	About: "Serves emulated boards to programs outside papersctl.",
	Subs: []*base.Command{{Name: "serve", Summary: "serve one emulated board as Linux ppdev files over FUSE",
		Synopsis: "--fuse DIR [--pes N] [--inject FAULT ...]", CatchSignals: true, StopsOnSignal: true,
		About: "Serves one emulated board as Linux ppdev files (DIR/parport0 … parport<N-1>) until\n" +
			"interrupted, then prints each PE's port operations and exits 0. Point QEMU at them with\n" +
			"  -chardev parallel,id=p,path=DIR/parport<k> -device isa-parallel,chardev=p\n" +
			"so that a guest's port 0x378 is PE k's port.",
		New: func() base.Runner { return &serveCmd{} }},
		{Name: "fault", Summary: "change the faults of a board that emu serve is serving, while it runs",
			Synopsis: "DIR CHANGE ...",
			About: "Changes the faults of the board served in DIR (papersctl emu serve --fuse DIR, or\n" +
				"papersctl hil --fuse DIR) at once, while programs use it. Each CHANGE is one of\n" +
				"  PE<k>.<LINE>=stuck0|stuck1   hold a line low or high (e.g. PE1.D3=stuck0)\n" +
				"  PE<k>=unplug                 pull PE k's cable out\n" +
				"  PE<k>=replug                 plug it back in\n" +
				"  PE<k>=repair                 clear every stuck line of PE k\n" +
				"and then prints the board's faults. (It writes the lines to DIR/" + ppdevfs.FaultsFile + ".)",
			Args: base.Positional{Synopsis: "DIR CHANGE ...", Min: 2, Max: -1, Complete: "files",
				Missing: "write papersctl emu fault DIR CHANGE ..., e.g. papersctl emu fault /tmp/board PE1=unplug"},
			New: func() base.Runner { return faultCmd{} }}}}

// faultCmd is papersctl emu fault: it writes each change to the served
// board's faults file, which applies it.
type faultCmd struct{}

func (faultCmd) Define(*base.FlagSet) {}

func (faultCmd) Check(_ *base.FlagSet, args []string) error {
	var p base.Problems
	for _, c := range args[1:] {
		if err := checkChange(c); err != nil {
			p.Addf("%v", err)
		}
	}
	return p.Err()
}

// checkChange checks a change's form on a scratch board of every PE, so
// that a typo is a usage error before the served board is touched.
func checkChange(c string) error {
	b, err := emu.New(lpt.MaxPEs)
	if err != nil {
		return err
	}
	if b.Change(c) != nil {
		return fmt.Errorf("%q: not a change: write PE<k>.<LINE>=stuck0|stuck1 (e.g. PE1.D3=stuck0), PE<k>=unplug, PE<k>=replug or PE<k>=repair", c)
	}
	return nil
}

func (faultCmd) Run(e *base.Env, args []string) error {
	dir := args[0]
	faults, err := ppdevfs.ChangeFaults(dir, args[1:]...)
	switch {
	case errors.Is(err, ppdevfs.ErrRefused):
		return fmt.Errorf("%w (the server's log says why; its PEs: ls %s)", err, dir)
	case err != nil:
		return fmt.Errorf("%w (is papersctl emu serve --fuse %s, or papersctl hil --fuse %s, running?)", err, dir, dir)
	case len(faults) == 0:
		faults = []string{"none"}
	}
	fmt.Fprintf(e.Stdout, "faults now: %s\n", strings.Join(faults, ", "))
	return nil
}

type serveCmd struct {
	dir    string
	pes    int
	faults boardflag.FaultFlag
	debug  bool
	vcd    string
}

func (c *serveCmd) Define(f *base.FlagSet) {
	f.Path(&c.dir, "fuse", "", "dir", false, "new or empty directory to mount the board's ppdev files on (created if missing; one holding files or a mount point is refused)")
	f.Int(&c.pes, "pes", 4, 1, lpt.MaxPEs, "PEs on the board")
	c.faults.Define(f, "fault to inject into the board")
	f.Bool(&c.debug, "debug", "log every FUSE request")
	f.Path(&c.vcd, "vcd", "", "file", false, "record every port operation in this VCD file (GTKWave), one time step each")
}

func (c *serveCmd) Check(f *base.FlagSet, _ []string) error {
	var p base.Problems
	if !f.IsSet("fuse") {
		p.Addf("--fuse: give the directory to serve the board's ppdev files in, e.g. --fuse /tmp/board")
	}
	c.faults.Check(&p, c.pes)
	if c.vcd != "" {
		boardflag.CheckVCDPath(&p, c.vcd)
	}
	return p.Err()
}

func (c *serveCmd) Run(e *base.Env, _ []string) (err error) {
	board, err := emu.New(c.pes)
	if err != nil {
		return err
	}
	for _, f := range c.faults.List {
		if err := board.Inject(f); err != nil {
			return err
		}
	}
	created := false
	if _, err := os.Stat(c.dir); os.IsNotExist(err) {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return err
		}
		created = true
	}
	if created {
		defer os.Remove(c.dir)
	}
	opt := ppdevfs.Options{PEs: c.pes, Debug: c.debug}
	if c.vcd != "" {
		out, err := boardflag.OpenVCD(c.vcd)
		if err != nil {
			return err
		}
		defer func() { err = cmp.Or(err, out.Close(e.Stderr)) }()
		opt.Wrap = out.Attach(board)
	}
	// fusermount takes seconds on a loaded machine: say what is happening.
	line := progress.New(e.Stderr)
	line.Show("emu serve: mounting the board's ppdev files on %s (fusermount)", c.dir)
	srv, err := ppdevfs.Mount(c.dir, board, opt)
	line.Clear()
	if err != nil {
		return err
	}
	for k := 0; k < c.pes; k++ {
		fmt.Fprintf(e.Stdout, "PE %d: %s\n", k, srv.Path(k))
	}
	fmt.Fprintf(e.Stdout, "serving a %d-PE board (faults: %v); interrupt to stop\n", c.pes, c.faults.List)
	fmt.Fprintf(e.Stdout, "change its faults while it runs: papersctl emu fault %s PE1=unplug (replug, repair, PE1.D3=stuck0)\n", c.dir)
	showPanel(e, board, c.pes)
	err = srv.Unmount()
	for k := 0; k < c.pes; k++ {
		st := srv.Stats(k)
		fmt.Fprintf(e.Stdout, "PE %d: %d port operations (%d unsupported)\n", k, st.Ioctls, st.Unknown)
	}
	fmt.Fprintln(e.Stdout, "stopped")
	return err
}

// showPanel prints the board's front panel each time an LED changes
// (sampled every 100 ms) until the command is stopped.
func showPanel(e *base.Env, board *emu.Board, pes int) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		if p := boardflag.FrontPanel(board, pes); p != last {
			fmt.Fprintln(e.Stdout, "front panel:", p)
			last = p
		}
		select {
		case <-e.Ctx.Done():
			return
		case <-tick.C:
		}
	}
}
