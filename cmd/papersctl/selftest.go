package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/selftest"
)

func init() {
	register(&command{name: "selftest", summary: "test the board and driver line by line, and diagnose faults", run: runSelftest})
}

// faultList collects repeated --inject flags.
type faultList []emu.Fault

func (f *faultList) String() string { return fmt.Sprint(*f) }
func (f *faultList) Set(s string) error {
	x, err := emu.ParseFault(s)
	if err == nil {
		*f = append(*f, x)
	}
	return err
}

func runSelftest(args []string) (status int) {
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	pes := fs.Int("pes", 4, "number of PEs in the cluster (1 to 32)")
	pe := fs.Int("pe", 0, "this PC's PE id (multi-PC mode), or the connector its cable is on (single-PC mode)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	port := fs.String("port", "", "test a real port by direct I/O at this base address, e.g. 0x378")
	ppdev := fs.String("ppdev", "", "test a real port through ppdev, e.g. /dev/parport0")
	gpio := fs.String("gpio", "", "test a board wired to GPIO pins (mapping as for papersctl's gpio backend)")
	single := fs.Bool("single", false, "single-PC mode: this port alone on the board (the default on real ports)")
	mode := fs.String("mode", "", "cluster (emulator default), single, or multi-pc (real ports: run on every PC at once with --pe i --pes n)")
	noPrompt := fs.Bool("no-prompt", false, "do not ask a person to confirm LED colours (LED lines are then not checkable)")
	timeout := fs.Duration("timeout", 0, "per-wait timeout (default 200ms on the emulator, 2s on real ports)")
	checkIn := fs.Duration("checkin-timeout", 0, "how long each PC waits for the others to start selftest (default 1m in multi-PC mode, else the per-wait timeout)")
	var faults faultList
	fs.Var(&faults, "inject", "inject a fault into the emulator: PE<k>.<LINE>=stuck0|stuck1 or PE<k>=unplugged (repeatable)")
	vcdPath := fs.String("vcd", "", "record the emulated run in this VCD file (GTKWave), one time step per port operation")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: papersctl selftest [flags]\n\nRuns on the embedded emulator unless a real port is given. Exits 1 when a check fails.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "papersctl selftest: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg := selftest.Config{PEs: *pes, PE: *pe, Faults: faults, Timeout: *timeout, CheckInTimeout: *checkIn, Mode: selftest.Mode(*mode)}
	if *single {
		if *mode != "" && *mode != string(selftest.Single) {
			fmt.Fprintf(os.Stderr, "papersctl selftest: --single and --mode %s disagree: give one of them\n", *mode)
			return 2
		}
		cfg.Mode = selftest.Single
	}
	var specs []string
	for _, s := range []struct{ kind, v string }{{"port", *port}, {"ppdev", *ppdev}, {"gpio", *gpio}} {
		if s.v != "" {
			specs = append(specs, s.kind+":"+s.v)
		}
	}
	if *vcdPath != "" {
		if len(specs) > 0 {
			fmt.Fprintln(os.Stderr, "papersctl selftest: --vcd records the emulator: drop --vcd, or the real port")
			return 2
		}
		out := openVCD("selftest", *vcdPath)
		if out == nil {
			return 2
		}
		defer func() { status = max(status, report(out.close("selftest"))) }()
		cfg.Record = out.attach
	}
	var notes []string
	switch len(specs) {
	case 0:
	case 1:
		p, err := backend.Open(specs[0])
		if err != nil {
			fmt.Fprintf(os.Stderr, "papersctl selftest: %v\n", err)
			return 1
		}
		defer p.Close()
		cfg.Port, cfg.Backend = p, specs[0]
		if *mode == "" && !*single && isSet(fs, "pe") && isSet(fs, "pes") {
			cfg.Mode = selftest.MultiPC // --pe i --pes n on a real port
		}
		if st, err := os.Stdin.Stat(); !*noPrompt && err == nil && st.Mode()&os.ModeCharDevice != 0 {
			cfg.AskLED = askLED
		} else if !*noPrompt {
			notes = append(notes, "stdin is not a terminal: not asking about LED colours (as with --no-prompt)")
		}
	default:
		fmt.Fprintf(os.Stderr, "papersctl selftest: give at most one of --port, --ppdev and --gpio (got %s)\n", strings.Join(specs, ", "))
		return 2
	}
	if cfg.Mode == selftest.MultiPC {
		fmt.Fprintf(os.Stderr, "papersctl selftest: PE %d of %d: waiting up to %v for the other PCs to start selftest with --pes %d\n", cfg.PE, cfg.PEs, cmp.Or(cfg.CheckInTimeout, selftest.MultiPCCheckIn), cfg.PEs)
	}
	rep, err := selftest.Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl selftest: %v\n", err)
		return 2
	}
	rep.Notes = append(rep.Notes, notes...)
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteTable(os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl selftest: %v\n", err)
		return 1
	}
	if !rep.Pass {
		return 1
	}
	return 0
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

var stdin = bufio.NewReader(os.Stdin)

// askLED asks the person at the board which colour an LED shows.
func askLED(pe int, question string) (emu.LED, error) {
	for {
		fmt.Fprintf(os.Stderr, "%s [g]reen, [r]ed, [o]range (both), [d]ark: ", question)
		line, err := stdin.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("reading the answer about PE %d's LED: %w", pe, err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "g", "green":
			return emu.Green, nil
		case "r", "red":
			return emu.Red, nil
		case "o", "orange", "both":
			return emu.Orange, nil
		case "d", "dark", "off", "none":
			return emu.Dark, nil
		}
	}
}
