// Package hilcmd is papersctl hil.
package hilcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/boardflag"
	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/pereport"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/spmd"
)

// Cmd is papersctl hil.
var Cmd = &base.Command{Name: "hil", Summary: "run papersctl in N QEMU machines wired to one emulated board",
	Synopsis: "[-n N] [--inject FAULT ...] [--fuse DIR] [--timeout D] {-- COMMAND [ARGS ...] | --exec FILE [-- ARGS ...]}", CatchSignals: true,
	About: "Boots N QEMU machines (Debian kernel, TCG) whose parallel ports at 0x378 are PEs 0..N-1 of one\n" +
		"emulated board, runs 'papersctl COMMAND ARGS' in each ({pe} and {pes} in ARGS become the\n" +
		"machine's PE and N), prints each console prefixed with pe<k>| and exits 0 when all commands do.\n" +
		"COMMAND's flags are checked here before anything boots. With --exec, each machine runs the\n" +
		"static SPMD program FILE instead, unchanged, as PE k with PAPERS_PORT=0x378 (direct I/O), and\n" +
		"the machines share one LAN (machine k is 10.31.0.<k+1>) for its data network. The board is\n" +
		"served in a directory (--fuse, or a temporary one) whose path hil prints: 'papersctl emu fault\n" +
		"DIR PE1=unplug' changes its faults while the machines run. Examples:\n" +
		"  papersctl hil -n 4 -- selftest --port 0x378 --pe {pe} --pes {pes}\n" +
		"  CGO_ENABLED=0 go build ./examples/matmul && papersctl hil -n 4 --exec matmul -- -block 32",
	Args: base.Positional{Synopsis: "COMMAND [ARGS ...]", Max: -1, Complete: "guest"}, // required unless --guest
	New:  func() base.Runner { return &hilCmd{} }}

type hilCmd struct {
	n       int
	faults  boardflag.FaultFlag
	board   string
	timeout time.Duration
	memory  string
	binary  string
	exec    string
	json    bool
	guest   bool
	pe, pes int
}

func (c *hilCmd) Define(f *base.FlagSet) {
	f.Int(&c.n, "n", 1, 1, lpt.MaxPEs, "machines (PEs)")
	c.faults.Define(f, "board fault")
	f.Path(&c.board, "fuse", "", "dir", false, "serve the board's ppdev files and faults file in this directory (created if missing), for papersctl emu fault DIR (default: a temporary directory, printed)")
	f.Duration(&c.timeout, "timeout", hil.DefaultTimeout, false, "per-machine limit from boot to power-off")
	f.String(&c.memory, "memory", "192M", "SIZE", checkMemory, "RAM per machine, as QEMU's -m takes it (e.g. 192M, 1G)")
	f.Path(&c.binary, "binary", "", "file", true, "static papersctl for the machines (default: this one if built with CGO_ENABLED=0, else build ./cmd/papersctl)")
	f.Path(&c.exec, "exec", "", "file", true, "run this static SPMD program (CGO_ENABLED=0) in the machines instead of a papersctl command, with ARGS")
	f.Bool(&c.json, "json", "print each machine's result as JSON on stdout (the consoles then go to stderr)")
	f.Bool(&c.guest, "guest", "internal: act as init inside a machine")
	f.Int(&c.pe, "pe", 0, 0, lpt.MaxPEs-1, "internal (with --guest): this machine's PE")
	f.Int(&c.pes, "pes", 1, 1, lpt.MaxPEs, "internal (with --guest): number of machines")
	for _, name := range []string{"guest", "pe", "pes"} {
		f.Hide(name)
	}
}

var memorySize = regexp.MustCompile(`^[1-9][0-9]*[KMGT]?$`)

func checkMemory(s string) error {
	if !memorySize.MatchString(s) {
		return errors.New("want a size such as 192M or 1G")
	}
	return nil
}

// hilFlags names the flag of each hil.Config field.
var hilFlags = map[string]string{"N": "n", "Faults": "inject", "BoardDir": "fuse", "Timeout": "timeout", "Memory": "memory", "Binary": "binary", "Program": "exec"}

// Check checks hil's flags and, with the placeholders replaced for PE 0,
// the command the machines will run.
func (c *hilCmd) Check(f *base.FlagSet, args []string) error {
	if c.guest {
		return nil // inside a machine: the host checked everything
	}
	if len(args) == 0 && c.exec == "" {
		return base.Usagef("missing COMMAND [ARGS ...]: what papersctl runs in the machines, e.g. -- selftest --port 0x378 (or --exec FILE: a program of your own)")
	}
	var p base.Problems
	p.AddFields(hil.Config{N: c.n, Faults: c.faults.Strings(), Args: args, Program: c.exec, BoardDir: c.board, Timeout: c.timeout}.Validate(), hilFlags)
	if c.exec != "" {
		if err := hil.CheckProgram(c.exec); err != nil {
			p.Addf("--exec: %v", err)
		}
		return p.Err()
	}
	name := args[0]
	sub := base.Lookup(base.Commands, name)
	switch {
	case sub == nil || sub.Subs != nil:
		p.Addf("%q is not a papersctl command the machines can run: use one of %s%s", name, strings.Join(base.GuestCommands(), ", "), base.Suggest(name, base.GuestCommands(), ""))
	case !sub.Guest:
		p.Addf("%s: the machines run %s", name, strings.Join(base.GuestCommands(), ", "))
	default:
		// Each machine's command line, as it will run: the first one
		// that is wrong shows the problem.
		for pe := range c.n {
			if err := checkGuest(sub, hil.Substitute(args[1:], pe, c.n)); err != nil {
				line := base.Words(append([]string{"papersctl", name}, hil.Substitute(args[1:], pe, c.n)...))
				for _, prob := range base.UsageLines(err) {
					p.Addf("in machine %d's '%s': %s", pe, line, prob)
				}
				break
			}
		}
	}
	return p.Err()
}

// checkGuest checks a command line of sub as a machine will run it.
func checkGuest(sub *base.Command, args []string) error {
	_, _, _, err := base.Prepare(sub, "papersctl "+sub.Name, args)
	if errors.Is(err, base.ErrHelp) {
		err = base.Usagef("-h: the machines would print the help and stop: drop -h")
	}
	return err
}

func (c *hilCmd) Run(e *base.Env, args []string) error {
	if c.guest {
		if err := hil.Guest(c.pe, c.pes); err != nil {
			return err
		}
		return base.ErrFailed
	}
	if err := hil.Preflight(); err != nil {
		return err
	}
	bin, removeBin, err := c.staticBinary(e)
	if err != nil {
		return err
	}
	defer removeBin()
	board, removeBoard, err := c.boardDir()
	if err != nil {
		return err
	}
	defer removeBoard()
	fmt.Fprintf(e.Stderr, "papersctl hil: the board is served in %s: change its faults while the machines run with papersctl emu fault %s PE1=unplug (replug, repair, PE1.D3=stuck0)\n", board, board)
	start := time.Now()
	consoles := e.Stdout
	if c.json {
		consoles = e.Stderr
	}
	res, err := hil.Run(e.Ctx, hil.Config{
		N: c.n, Faults: c.faults.Strings(), Args: args, Binary: bin, Program: c.exec, BoardDir: board,
		Timeout: c.timeout, Memory: c.memory, Output: consoles, Env: hilEnv(),
		// Lines, not a progress line: a run of minutes is never silent,
		// in a log too.
		Progress: func(s string) {
			fmt.Fprintf(e.Stderr, "papersctl hil: %v: %s\n", time.Since(start).Round(time.Second), s)
		},
	})
	return c.report(e, res, err)
}

// staticBinary is the papersctl the machines run: --binary, else this
// one when it is static, else one built in a temporary directory that
// remove deletes.
func (c *hilCmd) staticBinary(e *base.Env) (bin string, remove func(), err error) {
	bin = c.binary
	if bin == "" {
		bin = hil.StaticSelf()
	}
	if bin != "" {
		return bin, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "ttlpapers-hil-build-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "papersctl")
	if err := buildStatic(e, bin); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// boardDir is where the board is served: --fuse, else a temporary
// directory that remove deletes.
func (c *hilCmd) boardDir() (dir string, remove func(), err error) {
	if c.board != "" {
		return c.board, func() {}, nil
	}
	dir, err = os.MkdirTemp("", "ttlpapers-hil-board-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.Remove(dir) }, nil
}

// report prints the machines' summary (and with --json their report) and
// gives the command's outcome: the run's error, a stop, or ErrFailed when
// a machine failed.
func (c *hilCmd) report(e *base.Env, res *hil.Result, err error) error {
	if res != nil {
		fmt.Fprint(e.Stderr, res.Summary())
		fmt.Fprintf(e.Stderr, "total %v\n", res.Wall.Round(time.Millisecond))
		if c.json {
			if jerr := base.WriteJSON(e.Stdout, hilJSON(res)); jerr != nil && err == nil {
				err = jerr
			}
		}
	}
	switch {
	case err != nil:
		return err
	case e.Ctx.Err() != nil:
		return e.Ctx.Err()
	case !res.OK():
		return base.ErrFailed
	}
	return nil
}

// hilEnv is the --exec program's bounds on its waits, from this
// environment: PAPERS_TIMEOUT and PAPERS_CHECKIN as for any SPMD program.
func hilEnv() []string {
	var env []string
	for _, name := range []string{spmd.EnvTimeout, spmd.EnvCheckIn} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// buildStatic builds the machines' papersctl from the module in the
// current directory.
func buildStatic(e *base.Env, bin string) error {
	fmt.Fprintln(e.Stderr, "papersctl hil: building a static papersctl (CGO_ENABLED=0) from the module in the current directory")
	err := hil.BuildPapersctl(e.Ctx, ".", bin, func(building time.Duration) {
		fmt.Fprintf(e.Stderr, "papersctl hil: still building, %v\n", building.Round(time.Second))
	})
	if err != nil {
		return fmt.Errorf("%w\n(run from the ttlpapers source tree, or pass --binary)", err)
	}
	return nil
}

// hilMachine is one machine in hil --json.
type hilMachine struct {
	PE      int     `json:"pe"`
	Exit    int     `json:"exit"` // -1: no exit status reported
	WallMs  float64 `json:"wall_ms"`
	PortOps uint64  `json:"port_ops"`
	PerOpUs float64 `json:"per_op_us"`
	Error   string  `json:"error,omitempty"`
	// Report is a failing --exec program's error as data (kind, PE,
	// operation, the PEs and the line it names).
	Report *pereport.Report `json:"report,omitempty"`
}

func hilJSON(r *hil.Result) any {
	var ms []hilMachine
	for _, m := range r.Machines {
		h := hilMachine{PE: m.PE, Exit: m.Exit, WallMs: float64(m.Wall.Microseconds()) / 1e3, PortOps: m.Ioctls, PerOpUs: float64(m.PerOp.Nanoseconds()) / 1e3, Report: m.Report}
		if m.Err != nil {
			h.Error = m.Err.Error()
		}
		ms = append(ms, h)
	}
	return struct {
		OK       bool         `json:"ok"`
		WallMs   float64      `json:"wall_ms"`
		Machines []hilMachine `json:"machines"`
	}{r.OK(), float64(r.Wall.Microseconds()) / 1e3, ms}
}
