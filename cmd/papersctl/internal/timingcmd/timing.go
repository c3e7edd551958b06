// Package timingcmd is papersctl timing.
package timingcmd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/boardflag"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/progress"
	"github.com/ttlpapers/ttlpapers/emu/timed"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/timing"
)

// Cmd is papersctl timing.
var Cmd = &base.Command{Name: "timing", Summary: "race the NAND protocol variants on a timed board: failures and margins",
	Synopsis: "[flags]", CatchSignals: true,
	About: "Runs randomized trials of each NAND protocol variant (and the driver's barrier and interrupt) on a\n" +
		"timed emulated board and counts the trials with a wrong result on any PE; then searches each\n" +
		"variant's margins. Exits 1 when a variant the driver ships fails. See docs/timing.md.",
	New: func() base.Runner { return &timingCmd{margins: true} }}

// timingCmd is papersctl timing's flags and what check makes of them.
type timingCmd struct {
	pes, trials, nands, marginTrials, trial int
	control                                 string
	vcdPath, svgPath                        string
	opTime, skew                            time.Duration
	speed, stallProb                        float64
	seed                                    uint64
	asJSON, margins                         bool

	params   timing.Params // made by check from the flags
	port     timed.PortTiming
	metres   [2]float64
	delays   timed.Corner
	variants []timing.Variant
	ports    []timed.PortTiming // the margin search's
}

func (c *timingCmd) Define(f *base.FlagSet) {
	d := timing.DefaultParams()
	f.Int(&c.pes, "pes", d.PEs, 2, lpt.MaxPEs, "PEs on the board")
	f.Int(&c.trials, "trials", 1000, 1, 1000000, "randomized trials of each variant")
	f.Int(&c.nands, "nands", d.NANDs, 1, 10000, "operations per trial")
	base.Parsed(f, &c.port, "bus", d.Port.Name, "KIND", timed.PortTimingByName, "the bus of the PCs' ports: isa (1.26 µs per operation), pci (0.5 µs) or pcie (0.2 µs)")
	f.NamesValue("bus")
	f.Duration(&c.opTime, "op-time", 0, false, "time per port operation, instead of the port's")
	f.Func("stall-prob", "number", fraction(&c.stallProb, 1), "chance that an interrupt stalls a port operation, instead of the port's 1% (0 to 1)")
	base.Parsed(f, &c.metres, "cable", strconv.FormatFloat(timed.TenFeet, 'f', -1, 64), "METRES", parseMetres, "each PE's cable length in metres, or a range MIN-MAX drawn per PE and trial")
	f.NamesValue("cable")
	f.Duration(&c.skew, "skew", d.Skew, true, "largest extra delay of one cable line")
	f.Choice(&c.control, "control-lines", "open-collector", []string{"open-collector", "push-pull"}, "the PCs' control outputs: open-collector (4.7 kΩ pull-ups, slow to rise, as on the IBM adapter) or push-pull")
	c.speed = d.Speed
	f.Func("speed", "number", fraction(&c.speed, 0.5), "PE speed spread: each PE's operations take 1±speed times as long (0 to 0.5)")
	base.Parsed(f, &c.delays, "delays", d.Delays.String(), "CORNER", timed.ParseCorner, "gate delays: typ, min, max, spread (each gate at random from min to max) or zero")
	f.NamesValue("delays")
	c.seed = d.Seed
	f.Func("seed", "N", func(s string) error {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return fmt.Errorf("not a whole number from 0 to %d", uint64(1<<64-1))
		}
		c.seed = v
		return nil
	}, "seed of every trial")
	base.Parsed(f, &c.variants, "variant", "", "LIST", variantList,
		"comma-separated variants to run (default all): naive, no-resample, no-trailing-barrier, shipped, data-first, or op/name such as nand/shipped")
	f.NamesValue("variant")
	f.Bool(&c.margins, "margins", "also find each variant's margins (longest cable, largest skew) on each kind of port (default true; --margins=false skips it)")
	f.Int(&c.marginTrials, "margin-trials", 100, 1, 100000, "trials at each cable length and skew of the margin search")
	base.Parsed(f, &c.ports, "margin-buses", "isa,pci,pcie", "LIST", portList, "the buses (kinds of port) the margin search tries")
	f.NamesValue("margin-buses")
	f.Bool(&c.asJSON, "json", "print a JSON list of rows (op, variant, ops, trials, failures, ..., margins)")
	f.Path(&c.vcdPath, "vcd", "", "file", false, "record one trial (--trial) of one variant in this VCD file, in ns, instead of counting")
	f.Path(&c.svgPath, "svg", "", "file", false, "draw that trial's race (the first wrong result, or PE 0's first operation) as an SVG waveform")
	f.Int(&c.trial, "trial", 0, 0, 1<<30, "the trial --vcd and --svg record")
}

// fraction is the set function of a number flag from 0 to hi.
func fraction(p *float64, hi float64) func(string) error {
	return func(s string) error {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || !(x >= 0 && x <= hi) {
			return fmt.Errorf("need a number from 0 to %g", hi)
		}
		*p = x
		return nil
	}
}

// variantList is the --variant list's variants; "" is all of them.
func variantList(s string) ([]timing.Variant, error) {
	if s == "" {
		return timing.Variants, nil
	}
	return timing.VariantsNamed(strings.Split(s, ","))
}

func portList(s string) ([]timed.PortTiming, error) {
	var ports []timed.PortTiming
	for _, name := range strings.Split(s, ",") {
		pt, err := timed.PortTimingByName(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		ports = append(ports, pt)
	}
	return ports, nil
}

// check turns the flags into trial parameters, the variants and the margin
// search's ports, and refuses combinations that do not go together.
// timingFlags names the flag of each timing.Params field.
var timingFlags = map[string]string{"PEs": "pes", "NANDs": "nands", "Port": "bus", "Metres": "cable", "Skew": "skew",
	"Wire": "control-lines", "Speed": "speed", "Delays": "delays", "Seed": "seed"}

func (c *timingCmd) Check(f *base.FlagSet, _ []string) error {
	var pr base.Problems
	p := timing.DefaultParams()
	p.Port = c.port
	if f.IsSet("op-time") {
		p.Port.Op = c.opTime
	}
	if f.IsSet("stall-prob") {
		p.Port.StallProb = c.stallProb
	}
	p.Metres = c.metres
	if c.control == "push-pull" {
		p.Wire = timed.DefaultWire
		p.Wire.PullUpRise = p.Wire.Edge / 2
	}
	p.Delays = c.delays
	p.PEs, p.NANDs, p.Skew, p.Speed, p.Seed = c.pes, c.nands, c.skew, c.speed, c.seed
	pr.AddFields(p.Validate(), timingFlags)
	c.params = p
	recording := c.vcdPath != "" || c.svgPath != ""
	switch {
	case (f.IsSet("margin-trials") || f.IsSet("margin-buses")) && !c.margins:
		pr.Addf("--margin-trials and --margin-buses set the margin search, which --margins=false turns off")
	case f.IsSet("trial") && !recording:
		pr.Addf("--trial %d: picks the trial --vcd or --svg records: give one of them", c.trial)
	case recording && f.IsSet("trials"):
		pr.Addf("--trials %d: --vcd and --svg record one trial (--trial), not --trials of them", c.trials)
	case recording && len(c.variants) != 1:
		pr.Addf("--vcd and --svg record one variant: give exactly one with --variant (e.g. --variant nand/no-resample)")
	case recording && c.variants[0].Op != "nand" && c.svgPath != "":
		pr.Addf("--svg draws a NAND's race: give a NAND variant (--vcd records any)")
	}
	for _, path := range []string{c.vcdPath, c.svgPath} {
		if path != "" {
			boardflag.CheckVCDPath(&pr, path)
		}
	}
	return pr.Err()
}

func (c *timingCmd) Run(e *base.Env, _ []string) error {
	if c.vcdPath != "" || c.svgPath != "" {
		outs, err := createOutputs(c.vcdPath, c.svgPath)
		if err != nil {
			return err
		}
		return recordTrial(e.Stdout, c.params, c.variants[0], c.trial, outs)
	}
	// One variant at a time, in the order of the tables, to show
	// progress on a terminal: a run takes a minute or more.
	line := progress.New(e.Stderr)
	start := time.Now()
	show := func(what string, v timing.Variant) {
		line.Show("timing: %s %s/%s (%v)", what, v.Op, v.Name, time.Since(start).Round(time.Second))
	}
	var results []timing.Result
	for _, v := range c.variants {
		show(fmt.Sprintf("%d trials of", c.trials), v)
		r, err := timing.Run(e.Ctx, c.params, []timing.Variant{v}, c.trials, false)
		if err != nil {
			line.Clear()
			return err
		}
		results = append(results, r...)
	}
	var margins []timing.Margin
	for _, port := range c.marginPorts() {
		for _, v := range c.variants {
			show("margins on the "+port.Name+" port of", v)
			m, err := timing.Margins(e.Ctx, c.params, []timing.Variant{v}, []timed.PortTiming{port}, c.marginTrials)
			if err != nil {
				line.Clear()
				return err
			}
			margins = append(margins, m...)
		}
	}
	line.Clear()
	var err error
	if c.asJSON {
		err = writeTimingJSON(e.Stdout, results, margins)
	} else {
		err = writeTimingTable(e.Stdout, c, results, margins)
	}
	if err != nil {
		return err
	}
	for _, r := range results {
		if r.Shipped && r.Failures > 0 {
			return fmt.Errorf("%s/%s, which the driver ships, failed %d of %d trials (first: trial %d)", r.Op, r.Variant, r.Failures, r.Trials, r.FirstFailure)
		}
	}
	return nil
}

// marginPorts are the ports whose margins are searched: none without
// --margins.
func (c *timingCmd) marginPorts() []timed.PortTiming {
	if !c.margins {
		return nil
	}
	return c.ports
}

// metresText writes a cable length as --cable takes it.
func metresText(m [2]float64) string {
	s := strconv.FormatFloat(m[0], 'f', -1, 64)
	if m[1] != m[0] {
		s += "-" + strconv.FormatFloat(m[1], 'f', -1, 64)
	}
	return s
}

// parseMetres parses "3.048" or "2-5" (metres, an optional "m").
func parseMetres(s string) ([2]float64, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	var m [2]float64
	for i, v := range []string{lo, hi} {
		if i == 1 && !isRange {
			m[1] = m[0]
			break
		}
		x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "m"), 64)
		if err != nil {
			return m, fmt.Errorf("%q is not a length in metres (write 3.048, 3m or a range 2-5)", s)
		}
		m[i] = x
	}
	if !(m[0] >= 0 && m[0] <= m[1]) {
		return m, fmt.Errorf("%q: want 0 <= MIN <= MAX metres", s)
	}
	return m, nil
}

// createOutputs creates the --vcd and --svg files before the trial runs,
// so that a bad path is a usage error; an empty path gives a nil file.
func createOutputs(paths ...string) ([]*os.File, error) {
	files := make([]*os.File, len(paths))
	for i, p := range paths {
		if p == "" {
			continue
		}
		f, err := os.Create(p)
		if err != nil {
			for _, g := range files[:i] {
				if g != nil {
					g.Close()
					os.Remove(g.Name())
				}
			}
			return nil, err
		}
		files[i] = f
	}
	return files, nil
}

// recordTrial runs one trial, writes its waveform to outs[0] and its
// picture to outs[1] (either may be nil), and says what the trial saw.
func recordTrial(w io.Writer, p timing.Params, v timing.Variant, trial int, outs []*os.File) error {
	var buf strings.Builder
	r, err := timing.Trial(p, v, trial, &buf)
	werr := writeOut(outs[0], func(w io.Writer) error { _, err := io.WriteString(w, buf.String()); return err })
	serr := writeOut(outs[1], func(w io.Writer) error { return drawTrial(w, buf.String(), r, v) })
	if err := cmp.Or(err, werr, serr); err != nil {
		return err
	}
	fmt.Fprintf(w, "trial %d of %s: cables %.2f m, speeds %.2f, power-up %v: ", r.Trial, v, r.Metres, r.Speeds, r.PowerUp)
	switch {
	case !r.Failed:
		fmt.Fprintln(w, "every result right")
	case r.Err != nil:
		fmt.Fprintf(w, "failed: %v\n", r.Err)
	default:
		x := r.Wrong[0]
		fmt.Fprintf(w, "%d wrong results, the first PE %d's operation %d at %v: %04b, should be %04b (%s)\n", len(r.Wrong), x.PE, x.Index, x.At, x.Got, x.Want, x.Cause)
	}
	return nil
}

// writeOut writes f's contents with write and closes it; nil f is no
// output.
func writeOut(f *os.File, write func(io.Writer) error) error {
	if f == nil {
		return nil
	}
	err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// drawTrial draws the recorded trial's race as SVG.
func drawTrial(w io.Writer, recording string, r *timing.TrialResult, v timing.Variant) error {
	if r == nil {
		return nil
	}
	file, err := vcd.Parse(strings.NewReader(recording))
	if err != nil {
		return err
	}
	k, i := timing.Focus(r)
	plot, err := timing.Picture(r, k, i, fmt.Sprintf("%s, trial %d: PE %d's operation %d", v, r.Trial, k, i))
	if err != nil {
		return err
	}
	return file.SVG(w, plot)
}

// timingRow is one JSON row: a variant's counts and its margins.
type timingRow struct {
	timing.Result
	Rate    float64         `json:"rate"`
	Margins []timing.Margin `json:"margins,omitempty"`
}

func writeTimingJSON(w io.Writer, results []timing.Result, margins []timing.Margin) error {
	rows := []timingRow{}
	for _, r := range results {
		row := timingRow{Result: r, Rate: r.Rate()}
		for _, m := range margins {
			if m.Op == r.Op && m.Variant == r.Variant { // MaxSkew, a time.Duration, marshals as ns
				row.Margins = append(row.Margins, m)
			}
		}
		rows = append(rows, row)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeTimingTable(w io.Writer, f *timingCmd, results []timing.Result, margins []timing.Margin) error {
	p := f.params
	fmt.Fprintf(w, "%d trials of %d operations on %d PEs: %s ports (%v per operation ±%.0f%%, %.1f%% of them stalled %v-%v, %s control lines), cables %s m, skew up to %v, speeds ±%.0f%%, gate delays %s, seed %d\n\n",
		f.trials, p.NANDs, p.PEs, p.Port.Name, p.Port.Op, 100*p.Port.Jitter, 100*p.Port.StallProb, p.Port.StallMin, p.Port.StallMax,
		f.control, metresText(p.Metres), p.Skew, 100*p.Speed, p.Delays, p.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tvariant\tops\ttrials\tfailed\trate\tstale\toverwritten\tother\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f%%\t%d\t%d\t%d\t\n", r.Op, r.Variant, r.Ops, r.Trials, r.Failures, 100*r.Rate(),
			r.Stale, r.Overwritten, r.Early+r.WrongCode+r.Stalled+r.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nstale: read before the new NAND arrived (race a); overwritten: another PE had written its next data (race b);")
	fmt.Fprintln(w, "other: barriers left early, wrong interrupt codes, stalls, errors. A trial fails if any PE gets a wrong result.")
	if len(margins) == 0 {
		return nil
	}
	return writeMargins(w, p, margins)
}

func writeMargins(w io.Writer, p timing.Params, margins []timing.Margin) error {
	fmt.Fprintf(w, "\nmargins: the longest cable (every PE's; skew %v) and the largest skew (cables %.3g-%.3g m) with no failure in %d trials,\n",
		p.Skew, p.Metres[0], p.Metres[1], margins[0].Trials)
	fmt.Fprintf(w, "nor at any shorter one; tried %v m and %v ns; - fails at the first, >= passes them all\n\n", timing.MarginMetres, nsList(timing.MarginSkews))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tvariant\tport\tcable\tskew\t")
	for _, m := range margins {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", m.Op, m.Variant, m.Port, bound(m.MaxMetres, m.BeyondMetres, " m"), bound(float64(m.MaxSkew), m.BeyondSkew, " ns"))
	}
	return tw.Flush()
}

func bound(v float64, beyond bool, unit string) string {
	switch {
	case v < 0:
		return "-"
	case beyond:
		return ">=" + strconv.FormatFloat(v, 'g', 4, 64) + unit
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + unit
}

func nsList(ds []time.Duration) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = int64(d / time.Nanosecond)
	}
	return out
}
