// Package democmd is papersctl demo.
package democmd

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/base"
	"github.com/ttlpapers/ttlpapers/cmd/papersctl/internal/boardflag"
	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emulate"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/papers"
)

// Cmd is papersctl demo.
var Cmd = &base.Command{Name: "demo", Summary: "a small SPMD program: barrier, NAND, broadcast, vote, reductions, checked",
	Synopsis: "[--port SPEC --pe K] [--pes N] [--bench B] [--json]", CatchSignals: true, Guest: true,
	About: "Every PE computes values it can also predict for every other PE, combines them on the\n" +
		"board — 4-bit NAND, 8-bit broadcast from each PE in turn, vote, global max and sum — and\n" +
		"checks each result against the prediction. Without --port all PEs run on the built-in\n" +
		"emulator; with --port this PC runs PE --pe. Exits 1 on a wrong result.",
	New: func() base.Runner { return &demoCmd{} }}

type demoCmd struct {
	port    string
	pe, pes int
	bench   int
	timeout time.Duration
	json    bool
}

func (c *demoCmd) Define(f *base.FlagSet) {
	f.String(&c.port, "port", "", "SPEC", backend.Check, boardflag.PortUsage("the printer port to run as one PE (empty: all PEs on the built-in emulator)"))
	f.NamesValue("port")
	f.Int(&c.pe, "pe", 0, 0, lpt.MaxPEs-1, "this PE's number (with --port)")
	f.Int(&c.pes, "pes", 4, 1, lpt.MaxPEs, "number of PEs")
	f.Int(&c.bench, "bench", 1000, 0, 1e9, "barriers to time after the checks (0: none)")
	f.Duration(&c.timeout, "timeout", 30*time.Second, false, "limit for each wait on the other PEs")
	f.Bool(&c.json, "json", "print each PE's results as JSON")
}

func (c *demoCmd) Check(f *base.FlagSet, _ []string) error {
	var p base.Problems
	switch {
	case f.IsSet("pe") && c.port == "":
		p.Addf("--pe %d: picks this PC's PE on a real board: give --port too (without it every PE runs on the emulator)", c.pe)
	case c.pe >= c.pes:
		p.Addf("--pe %d: with --pes %d the PE ids are 0 to %d", c.pe, c.pes, c.pes-1)
	}
	return p.Err()
}

// demoResult is what one PE found, and its line of --json.
type demoResult struct {
	PE        int     `json:"pe"`
	PEs       int     `json:"pes"`
	NAND      uint8   `json:"nand"`
	Vote      uint64  `json:"vote"`
	Max       uint64  `json:"max"`
	Sum       uint64  `json:"sum"`
	Barriers  int     `json:"barriers,omitempty"`
	BarrierNs float64 `json:"barrier_ns,omitempty"`
}

func (r demoResult) String() string {
	s := fmt.Sprintf("PE %d of %d: NAND %#x, broadcasts ok, vote %#x, max %d, sum %d: all correct", r.PE, r.PEs, r.NAND, r.Vote, r.Max, r.Sum)
	if r.Barriers > 0 {
		s += fmt.Sprintf("\nPE %d: %d barriers: %v per barrier", r.PE, r.Barriers, time.Duration(r.BarrierNs).Round(10*time.Nanosecond))
	}
	return s
}

func (c *demoCmd) Run(e *base.Env, _ []string) error {
	cfg := papers.Config{PE: c.pe, PEs: c.pes, Timeout: c.timeout, Context: e.Ctx}
	results := make([]demoResult, c.pes)
	var err error
	var board *emu.Board
	if c.port == "" {
		if board, err = emu.New(c.pes); err != nil {
			return err
		}
		panel := &demoPanel{board: board, out: e.Stdout}
		if c.json {
			panel.out = nil
		}
		err = emulate.RunOn(board, c.pes, cfg, func(p *papers.PE) (err error) {
			results[p.Self()], err = demo(p, c.bench, panel)
			return err
		})
	} else {
		results = results[c.pe : c.pe+1]
		results[0], err = c.onPort(cfg)
	}
	if err != nil {
		return err
	}
	if c.json {
		return base.WriteJSON(e.Stdout, results)
	}
	for _, r := range results {
		fmt.Fprintln(e.Stdout, r)
	}
	if board != nil && !c.json {
		fmt.Fprintln(e.Stdout, "front panel after the run:", boardflag.FrontPanel(board, c.pes))
	}
	return nil
}

// onPort runs the demo as one PE on a real port.
func (c *demoCmd) onPort(cfg papers.Config) (demoResult, error) {
	lp, err := boardflag.OpenPort(c.port)
	if err != nil {
		return demoResult{}, err
	}
	p, err := papers.Open(lp, cfg)
	if err != nil {
		lp.Close() // on success the PE owns the port and closes it
		return demoResult{}, err
	}
	r, err := demo(p, c.bench, nil)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return r, fmt.Errorf("PE %d: %w", c.pe, err)
	}
	return r, nil
}

// demoValue is PE k's 8-bit input: every PE can compute everyone's.
func demoValue(k int) uint8 { return uint8((k*73 + 11) % 251) }

// demoPanel is where PE 0 shows the emulated board's front panel during the
// checks; nil on a real port.
type demoPanel struct {
	board *emu.Board
	out   io.Writer // nil: do not print (--json)
}

// demo is the SPMD program each PE runs.
func demo(p *papers.PE, bench int, panel *demoPanel) (demoResult, error) {
	r, err := demoChecks(p, panel)
	if err != nil || bench == 0 {
		return r, err
	}
	start := time.Now()
	for i := 0; i < bench; i++ {
		if err := p.Barrier(); err != nil {
			return r, err
		}
	}
	r.Barriers, r.BarrierNs = bench, float64(time.Since(start).Nanoseconds())/float64(bench)
	return r, nil
}

// demoChecks computes and checks every collective of the demo, with the
// LED showing the seed's "special" status (orange) meanwhile; the driver
// still turns it red while a barrier waits.
func demoChecks(p *papers.PE, panel *demoPanel) (demoResult, error) {
	r := demoResult{PE: p.Self(), PEs: p.PEs()}
	err := p.SetLED(papers.Orange)
	if err == nil {
		err = panel.show(p)
	}
	if err == nil {
		r.NAND, err = demoNAND(p)
	}
	if err == nil {
		err = demoBroadcasts(p)
	}
	if err == nil {
		r.Vote, err = demoVote(p)
	}
	if err == nil {
		r.Max, err = demoMax(p)
	}
	if err == nil {
		r.Sum, err = demoSum(p)
	}
	if err == nil {
		err = p.SetLED(papers.Green)
	}
	return r, err
}

// show has PE 0 print the front panel once the others wait for it in a
// barrier (red) while it shows orange (or 5 s have passed), then joins them.
func (d *demoPanel) show(p *papers.PE) error {
	if d != nil && d.out != nil && p.Self() == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for k := 1; k < p.PEs(); k++ {
			for d.board.LED(k) != lpt.Red && time.Now().Before(deadline) {
				runtime.Gosched()
			}
		}
		fmt.Fprintln(d.out, "front panel during the checks:", boardflag.FrontPanel(d.board, p.PEs()))
	}
	return p.Barrier()
}

// expect is nil when got is want, else an error saying what differs.
func expect(what string, got, want uint64) error {
	if got != want {
		return fmt.Errorf("%s = %#x, want %#x", what, got, want)
	}
	return nil
}

// demoNAND: a 4-bit NAND (bits 0-1 set everywhere, so the result is not
// trivially 0xf).
func demoNAND(p *papers.PE) (uint8, error) {
	nybble := func(k int) uint8 { return demoValue(k)&0xc | 0x3 }
	all := uint8(0xf)
	for k := range p.PEs() {
		all &= nybble(k)
	}
	nand, err := p.NAND(nybble(p.Self()))
	if err == nil {
		err = expect("NAND", uint64(nand), uint64(^all&0xf))
	}
	return nand, err
}

// demoBroadcasts: an 8-bit broadcast from each PE in turn. The root drives
// its nybble, the others 0xf, and the NAND is the root's nybble
// complemented.
func demoBroadcasts(p *papers.PE) error {
	for root := range p.PEs() {
		var got uint8
		for shift := 0; shift < 8; shift += 4 {
			x := uint8(0xf)
			if p.Self() == root {
				x = demoValue(root) >> shift & 0xf
			}
			r, err := p.NAND(x)
			if err != nil {
				return err
			}
			got |= (^r & 0xf) << shift
		}
		if err := expect(fmt.Sprintf("broadcast from PE %d", root), uint64(got), uint64(demoValue(root))); err != nil {
			return err
		}
	}
	return nil
}

// demoVote: one bit from every PE.
func demoVote(p *papers.PE) (uint64, error) {
	var want uint64
	for k := range p.PEs() {
		if demoValue(k)&1 != 0 {
			want |= 1 << k
		}
	}
	set, err := p.Vote(demoValue(p.Self())&1 != 0)
	vote := uint64(set) // the report's number
	if err == nil {
		err = expect("vote", vote, want)
	}
	return vote, err
}

// demoMax: the maximum, bit-serially with ANY (contenders without the bit
// drop out).
func demoMax(p *papers.PE) (uint64, error) {
	var got, want uint64
	for k := range p.PEs() {
		want = max(want, uint64(demoValue(k)))
	}
	contender := true
	for b := 7; b >= 0; b-- {
		mine := contender && demoValue(p.Self())>>b&1 != 0
		any, err := p.Any(mine)
		if err != nil {
			return got, err
		}
		if any {
			got |= 1 << b
			contender = mine
		}
	}
	return got, expect("max", got, want)
}

// demoSum: the sum, from one vote per bit.
func demoSum(p *papers.PE) (uint64, error) {
	var got, want uint64
	for k := range p.PEs() {
		want += uint64(demoValue(k))
	}
	for b := 0; b < 8; b++ {
		m, err := p.Vote(demoValue(p.Self())>>b&1 != 0)
		if err != nil {
			return got, err
		}
		got += uint64(m.Len()) << b
	}
	return got, expect("sum", got, want)
}
