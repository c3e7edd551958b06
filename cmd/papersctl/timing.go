package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/internal/stop"
	"github.com/ttlpapers/ttlpapers/timing"
)

func init() {
	register(&command{name: "timing", summary: "race the NAND protocol variants on a timed board: failures and margins", run: runTiming})
}

// timingFlags are papersctl timing's flags.
type timingFlags struct {
	fs                                      *flag.FlagSet
	pes, trials, nands, marginTrials, trial int
	port, cable, delays, variants, mports   string
	control                                 string
	vcdPath, svgPath                        string
	opTime, skew                            time.Duration
	speed, stallProb                        float64
	seed                                    uint64
	asJSON, margins                         bool
}

func newTimingFlags() *timingFlags {
	f := &timingFlags{fs: flag.NewFlagSet("timing", flag.ContinueOnError)}
	d := timing.DefaultParams()
	fs := f.fs
	fs.IntVar(&f.pes, "pes", d.PEs, "PEs on the board (2 to 32)")
	fs.IntVar(&f.trials, "trials", 1000, "randomized trials of each variant (1 to 1000000)")
	fs.IntVar(&f.nands, "nands", d.NANDs, "operations per trial (1 to 10000)")
	fs.StringVar(&f.port, "port", d.Port.Name, "the PCs' ports: isa (1.26 µs per operation), pci (0.5 µs) or pcie (0.2 µs)")
	fs.DurationVar(&f.opTime, "op-time", 0, "time per port operation, instead of the port's")
	fs.Float64Var(&f.stallProb, "stall-prob", 0, "chance that an interrupt stalls a port operation, instead of the port's 1%")
	fs.StringVar(&f.cable, "cable", strconv.FormatFloat(emu.TenFeet, 'f', -1, 64), "each PE's cable length in metres, or a range MIN-MAX drawn per PE and trial")
	fs.DurationVar(&f.skew, "skew", d.Skew, "largest extra delay of one cable line")
	fs.StringVar(&f.control, "control-lines", "open-collector", "the PCs' control outputs: open-collector (4.7 kΩ pull-ups, slow to rise, as on the IBM adapter) or push-pull")
	fs.Float64Var(&f.speed, "speed", d.Speed, "PE speed spread: each PE's operations take 1±speed times as long (0 to 0.5)")
	fs.StringVar(&f.delays, "delays", d.Delays.String(), "gate delays: typ, min, max, spread (each gate at random from min to max) or zero")
	fs.Uint64Var(&f.seed, "seed", d.Seed, "seed of every trial")
	fs.StringVar(&f.variants, "variant", "", "comma-separated variants to run (default all): naive, no-resample, no-trailing-barrier, shipped, data-first, or op/name such as nand/shipped")
	fs.BoolVar(&f.margins, "margins", true, "also find each variant's margins (longest cable, largest skew) on each kind of port")
	fs.IntVar(&f.marginTrials, "margin-trials", 100, "trials at each cable length and skew of the margin search")
	fs.StringVar(&f.mports, "margin-ports", "isa,pci,pcie", "the kinds of port the margin search tries")
	fs.BoolVar(&f.asJSON, "json", false, "print a JSON list of rows (op, variant, ops, trials, failures, ..., margins)")
	fs.StringVar(&f.vcdPath, "vcd", "", "record one trial (--trial) of one variant in this VCD file, in ns, instead of counting")
	fs.StringVar(&f.svgPath, "svg", "", "draw that trial's race (the first wrong result, or PE 0's first operation) as an SVG waveform")
	fs.IntVar(&f.trial, "trial", 0, "the trial --vcd and --svg record")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: papersctl timing [flags]\n\n"+
			"Runs randomized trials of each NAND protocol variant (and the driver's barrier and interrupt) on a timed\n"+
			"emulated board and counts the trials with a wrong result on any PE; then searches each variant's margins.\n"+
			"Exits 1 when a variant the driver ships fails. See docs/timing.md.\n\n")
		fs.PrintDefaults()
	}
	return f
}

func runTiming(args []string) int {
	f := newTimingFlags()
	if err := f.fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	p, variants, ports, err := f.check()
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl timing: %v\n", err)
		return 2
	}
	ctx, cancel := signal.NotifyContext(context.Background(), stop.Signals...)
	defer cancel()
	if f.vcdPath != "" || f.svgPath != "" {
		outs, err := createOutputs(f.vcdPath, f.svgPath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "papersctl timing: %v\n", err)
			return 2
		}
		return report(recordTrial(p, variants[0], f.trial, outs))
	}
	results, err := timing.Run(ctx, p, variants, f.trials, false)
	var margins []timing.Margin
	if err == nil && f.margins {
		margins, err = timing.Margins(ctx, p, variants, ports, f.marginTrials)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "papersctl timing: %v\n", err)
		return 1
	}
	if f.asJSON {
		err = writeTimingJSON(os.Stdout, results, margins)
	} else {
		err = writeTimingTable(os.Stdout, f, p, results, margins)
	}
	if err != nil {
		return report(err)
	}
	for _, r := range results {
		if r.Shipped && r.Failures > 0 {
			fmt.Fprintf(os.Stderr, "papersctl timing: %s/%s, which the driver ships, failed %d of %d trials (first: trial %d)\n", r.Op, r.Variant, r.Failures, r.Trials, r.FirstFailure)
			return 1
		}
	}
	return 0
}

// check validates the flags together and turns them into trial
// parameters, the variants and the margin search's ports.
func (f *timingFlags) check() (timing.Params, []timing.Variant, []emu.PortTiming, error) {
	p := timing.DefaultParams()
	fail := func(format string, args ...any) (timing.Params, []timing.Variant, []emu.PortTiming, error) {
		return p, nil, nil, fmt.Errorf(format, args...)
	}
	if f.fs.NArg() > 0 {
		return fail("unexpected arguments %q (every setting is a flag: see -h)", f.fs.Args())
	}
	var err error
	if p.Port, err = emu.PortTimingByName(f.port); err != nil {
		return fail("--port: %v", err)
	}
	if isSet(f.fs, "op-time") {
		p.Port.Op = f.opTime
	}
	if isSet(f.fs, "stall-prob") {
		p.Port.StallProb = f.stallProb
	}
	if p.Metres, err = parseMetres(f.cable); err != nil {
		return fail("--cable: %v", err)
	}
	switch f.control {
	case "open-collector":
	case "push-pull":
		p.Wire = emu.DefaultWire
		p.Wire.PullUpRise = p.Wire.Edge / 2
	default:
		return fail("--control-lines %q: use open-collector or push-pull", f.control)
	}
	if p.Delays, err = emu.ParseCorner(f.delays); err != nil {
		return fail("--delays: %v", err)
	}
	p.PEs, p.NANDs, p.Skew, p.Speed, p.Seed = f.pes, f.nands, f.skew, f.speed, f.seed
	if err := p.Check(); err != nil {
		return fail("%v", err)
	}
	variants := timing.Variants
	if f.variants != "" {
		if variants, err = timing.VariantsNamed(strings.Split(f.variants, ",")); err != nil {
			return fail("--variant: %v", err)
		}
	}
	var ports []emu.PortTiming
	for _, name := range strings.Split(f.mports, ",") {
		pt, err := emu.PortTimingByName(strings.TrimSpace(name))
		if err != nil {
			return fail("--margin-ports: %v", err)
		}
		ports = append(ports, pt)
	}
	return p, variants, ports, f.checkCounts(variants)
}

// checkCounts validates the trial counts and the flags that only go with
// others.
func (f *timingFlags) checkCounts(variants []timing.Variant) error {
	recording := f.vcdPath != "" || f.svgPath != ""
	switch {
	case f.trials < 1 || f.trials > 1000000:
		return fmt.Errorf("--trials %d: use 1 to 1000000", f.trials)
	case f.marginTrials < 1 || f.marginTrials > 100000:
		return fmt.Errorf("--margin-trials %d: use 1 to 100000", f.marginTrials)
	case (isSet(f.fs, "margin-trials") || isSet(f.fs, "margin-ports")) && !f.margins:
		return fmt.Errorf("--margin-trials and --margin-ports set the margin search, which --margins=false turns off")
	case isSet(f.fs, "trial") && !recording:
		return fmt.Errorf("--trial picks the trial --vcd or --svg records: give one of them")
	case f.trial < 0:
		return fmt.Errorf("--trial %d: trials are numbered from 0", f.trial)
	case recording && isSet(f.fs, "trials"):
		return fmt.Errorf("--vcd and --svg record one trial (--trial), not --trials of them")
	case recording && len(variants) != 1:
		return fmt.Errorf("--vcd and --svg record one variant: give exactly one with --variant (e.g. --variant nand/no-resample)")
	case recording && variants[0].Op != "nand" && f.svgPath != "":
		return fmt.Errorf("--svg draws a NAND's race: give a NAND variant (--vcd records any)")
	}
	return nil
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
func recordTrial(p timing.Params, v timing.Variant, trial int, outs []*os.File) error {
	var buf strings.Builder
	r, err := timing.Trial(p, v, trial, &buf)
	werr := writeOut(outs[0], func(w io.Writer) error { _, err := io.WriteString(w, buf.String()); return err })
	serr := writeOut(outs[1], func(w io.Writer) error { return drawTrial(w, buf.String(), r, v) })
	if err := cmp.Or(err, werr, serr); err != nil {
		return err
	}
	fmt.Printf("trial %d of %s: cables %.2f m, speeds %.2f, power-up %v: ", r.Trial, v, r.Metres, r.Speeds, r.PowerUp)
	switch {
	case !r.Failed:
		fmt.Println("every result right")
	case r.Err != nil:
		fmt.Printf("failed: %v\n", r.Err)
	default:
		w := r.Wrong[0]
		fmt.Printf("%d wrong results, the first PE %d's operation %d at %v: %04b, should be %04b (%s)\n", len(r.Wrong), w.PE, w.Index, w.At, w.Got, w.Want, w.Cause)
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

func writeTimingTable(w io.Writer, f *timingFlags, p timing.Params, results []timing.Result, margins []timing.Margin) error {
	fmt.Fprintf(w, "%d trials of %d operations on %d PEs: %s ports (%v per operation ±%.0f%%, %.1f%% of them stalled %v-%v, %s control lines), cables %s m, skew up to %v, speeds ±%.0f%%, gate delays %s, seed %d\n\n",
		f.trials, p.NANDs, p.PEs, p.Port.Name, p.Port.Op, 100*p.Port.Jitter, 100*p.Port.StallProb, p.Port.StallMin, p.Port.StallMax,
		f.control, f.cable, p.Skew, 100*p.Speed, p.Delays, p.Seed)
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
