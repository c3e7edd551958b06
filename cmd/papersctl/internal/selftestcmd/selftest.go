// Package selftestcmd is papersctl selftest.
package selftestcmd

import (
	"cmp"
	"fmt"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/boardflag"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/term"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/selftest"
)

// Cmd is papersctl selftest.
var Cmd = &base.Command{Name: "selftest", Summary: "test the board and driver line by line, and diagnose faults",
	Synopsis: "[flags]", CatchSignals: true, Guest: true,
	About: "Runs on the embedded emulator unless a real port is given (--port).\n" +
		"Exits 1 when a check fails. Modes: cluster (the emulator's default: every PE in-process),\n" +
		"single (one port alone on the board: the default on a real port), multi-pc (every PC runs\n" +
		"selftest at once with --pe i --pes n). See docs/selftest.md.",
	New: func() base.Runner { return &selftestCmd{} }}

type selftestCmd struct {
	pes, pe               int
	json, single, noAsk   bool
	port                  string
	mode                  string
	timeout, checkIn, ask time.Duration
	faults                boardflag.FaultFlag
	vcd                   string
	chosen                selftest.Mode // the mode the flags select (check sets it)
}

func (c *selftestCmd) Define(f *base.FlagSet) {
	f.Int(&c.pes, "pes", 4, 1, lpt.MaxPEs, "number of PEs in the cluster")
	f.Int(&c.pe, "pe", 0, 0, lpt.MaxPEs-1, "this PC's PE id (multi-PC mode), or the connector its cable is on (single-PC mode)")
	f.Bool(&c.json, "json", "print the report as JSON")
	f.String(&c.port, "port", "", "SPEC", backend.Check, boardflag.PortUsage("test a real port"))
	f.NamesValue("port")
	f.Bool(&c.single, "single", "single-PC mode: this port alone on the board (the default on real ports)")
	f.Choice(&c.mode, "mode", "", []string{string(selftest.Cluster), string(selftest.Single), string(selftest.MultiPC)},
		"cluster (emulator default), single, or multi-pc (real ports: run on every PC at once with --pe i --pes n)")
	f.Bool(&c.noAsk, "no-prompt", "do not ask a person to confirm LED colours (LED lines are then not checkable)")
	f.Duration(&c.ask, "prompt-timeout", selftest.DefaultPromptWait, false, "how long to wait for each answer about an LED before skipping the LED lines")
	f.Duration(&c.timeout, "timeout", 0, true, "per-wait timeout (0: 5s)")
	f.Duration(&c.checkIn, "checkin-timeout", 0, true, "how long each PC waits for the others to start selftest (0: 1m in multi-PC mode, else the per-wait timeout)")
	c.faults.Define(f, "inject a fault into the emulator")
	f.Path(&c.vcd, "vcd", "", "file", false, "record the emulated run in this VCD file (GTKWave), one time step per port operation")
}

// spec is the real port --port names, written in full; "" for the
// emulator.
func (c *selftestCmd) spec() string {
	s, _ := backend.Canonical(c.port) // checked as the flag was read
	return s
}

// resolveMode is the mode the flags select.
func (c *selftestCmd) resolveMode(f *base.FlagSet) selftest.Mode {
	switch {
	case c.mode != "":
		return selftest.Mode(c.mode)
	case c.single:
		return selftest.Single
	case c.spec() == "":
		return selftest.Cluster
	case f.IsSet("pe") && f.IsSet("pes"):
		return selftest.MultiPC // --pe i --pes n on a real port
	}
	return selftest.Single
}

// selftestFlags names the flag of each selftest.Config field.
var selftestFlags = map[string]string{"PEs": "pes", "PE": "pe", "Mode": "mode", "Faults": "inject", "Timeout": "timeout",
	"CheckInTimeout": "checkin-timeout", "Backend": "port", "Record": "vcd"}

// config is the selftest the flags ask for; the port is named, not yet
// opened, and the recording only marked.
func (c *selftestCmd) config() selftest.Config {
	cfg := selftest.Config{PEs: c.pes, PE: c.pe, Faults: c.faults.List, Timeout: c.timeout, CheckInTimeout: c.checkIn,
		Mode: c.chosen, Backend: c.spec()}
	if c.vcd != "" {
		cfg.Record = recordLater
	}
	return cfg
}

// recordLater stands in for the recorder, which run opens, while the
// configuration is checked.
func recordLater(*emu.Board) func(int, lpt.Port) lpt.Port { return nil }

func (c *selftestCmd) Check(f *base.FlagSet, _ []string) error {
	var p base.Problems
	c.chosen = c.resolveMode(f)
	if c.single && c.mode != "" && c.mode != string(selftest.Single) {
		p.Addf("--single and --mode %s disagree: give one of them", c.mode)
	}
	p.AddFields(c.config().Validate(), selftestFlags)
	if c.vcd != "" {
		boardflag.CheckVCDPath(&p, c.vcd)
	}
	if c.spec() == "" && f.IsSet("no-prompt") {
		p.Addf("--no-prompt: the emulator reads its own LEDs and asks nobody: drop --no-prompt")
	}
	if c.chosen == selftest.Cluster && f.IsSet("pe") {
		p.Addf("--pe %d: cluster mode tests every PE; --pe picks one PC with --single or a real port", c.pe)
	}
	return p.Err()
}

func (c *selftestCmd) Run(e *base.Env, _ []string) (err error) {
	cfg := c.config()
	cfg.Record = nil
	if c.vcd != "" {
		out, err := boardflag.OpenVCD(c.vcd)
		if err != nil {
			return err
		}
		defer func() { err = cmp.Or(err, out.Close(e.Stderr)) }()
		cfg.Record = out.Attach
	}
	var notes []string
	if spec := c.spec(); spec != "" {
		port, err := boardflag.OpenPort(spec)
		if err != nil {
			return err
		}
		defer port.Close()
		cfg.Port = port
		switch {
		case c.noAsk:
		case term.IsTerminal(e.Stdin):
			cfg.AskLED = selftest.Prompt(e.Stdin, e.Stderr, c.ask)
		default:
			notes = append(notes, "stdin is not a terminal: not asking about LED colours (as with --no-prompt)")
		}
	}
	if cfg.Mode == selftest.MultiPC {
		fmt.Fprintf(e.Stderr, "papersctl selftest: PE %d of %d: waiting up to %v for the other PCs to start selftest with --pes %d\n", cfg.PE, cfg.PEs, cmp.Or(cfg.CheckInTimeout, selftest.MultiPCCheckIn), cfg.PEs)
	}
	rep, err := selftest.Run(e.Ctx, cfg)
	if err != nil {
		return err
	}
	rep.Notes = append(rep.Notes, notes...)
	if c.json {
		err = base.WriteJSON(e.Stdout, rep)
	} else {
		err = rep.WriteTable(e.Stdout)
	}
	switch {
	case err != nil:
		return err
	case e.Ctx.Err() != nil:
		return e.Ctx.Err() // stopped: the report shows how far it got
	case !rep.Pass:
		return base.ErrFailed
	}
	return nil
}
