package strata

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/axis"
	"github.com/ttlpapers/ttlpapers/papers"
)

// The states of a state graph. Strata reserves 0 and 1 for the program's
// idle and busy, and uses 2 to 7 for its own operations while recording
// (as the manual's debugging library does) and 8 for block transfers; a
// program may use 9 to 15 (name them with NameState) or redefine any.
const (
	StateIdle = iota
	StateBusy
	StateLogging
	StateQprintf
	StateEmptyPrintQ
	StateBroadcast
	StateCombine
	StateBarrier
	// StateXfer is a block transfer being sent (SendBlockXfer…,
	// ServiceAllTransfers, CompleteTransfer): the data network's part in
	// the graph, in the first of the states the manual leaves to programs.
	StateXfer
	MaxStates = 16
)

var defaultStateNames = [MaxStates]string{
	"idle", "busy", "logging", "Qprintf", "EmptyPrintQ", "broadcasting", "combine", "barrier", "block transfer",
}

// stateColors: one colour per state, chosen to be told apart.
var stateColors = [MaxStates]string{
	"#dcdcdc", "#4c78a8", "#9d755d", "#eeca3b", "#b279a2", "#f58518", "#54a24b", "#e45756",
	"#72b7b2", "#ff9da6", "#2f4b7c", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#000000",
}

// traceCap is how many state changes a PE keeps before OutputStateLog must
// run (the manual's limit was 2048).
const traceCap = 1 << 14

type event struct {
	t     uint64 // nanoseconds since the trace origin
	state uint8
}

type trace struct {
	on      bool
	file    string
	title   string
	events  []event
	dropped int
	state   int
	names   [MaxStates]string
	origin  time.Time
}

// InitTrace starts a state graph that OutputStateLog writes to file as SVG
// (Strata's InitTrace). Every PE must call it: it is a barrier, after which
// every PE's clock for the graph starts at zero, and recording is on, in
// state busy.
func (s *S) InitTrace(file, title string) error {
	if file == "" {
		return papers.Errorf("strata", s.self, "InitTrace needs a file name")
	}
	if err := s.Barrier(); err != nil {
		return err
	}
	t := &s.trace
	t.file, t.title, t.names = file, title, defaultStateNames
	if cap(t.events) == 0 {
		t.events = make([]event, 0, traceCap)
	}
	t.origin = time.Now()
	t.events = t.events[:0]
	t.dropped = 0
	t.on = true
	t.state = -1
	s.SetState(StateBusy)
	return nil
}

// rebase restarts the graph at ResetCurrentCycle, dropping what came
// before (the manual's way to graph one section of a long program).
func (t *trace) rebase(s *S) {
	if t.file == "" {
		return
	}
	t.origin = s.clock.base
	t.events = t.events[:0]
	if t.state >= 0 {
		t.events = append(t.events, event{0, uint8(t.state)})
	}
}

// NameState names a state in the graph's legend (the manual did this in
// the graph specification file). Only PE 0's names are used.
func (s *S) NameState(state int, name string) error {
	if state < 0 || state >= MaxStates {
		return papers.Errorf("strata", s.self, "state %d out of range: a state graph has states 0 to %d", state, MaxStates-1)
	}
	s.trace.names[state] = name
	return nil
}

// SetState changes this PE's state and returns the previous one (Strata's
// SetState). The change is timestamped when recording; states outside 0
// to 15 are taken modulo 16.
func (s *S) SetState(state int) int {
	t := &s.trace
	old := t.state
	state &= MaxStates - 1
	t.state = state
	if t.on {
		if len(t.events) < cap(t.events) {
			t.events = append(t.events, event{uint64(time.Since(t.origin)), uint8(state)})
		} else {
			t.dropped++
		}
	}
	return old
}

// RecordStates turns recording of state changes on or off for this PE and
// returns the previous setting (Strata's RecordStates).
func (s *S) RecordStates(on bool) bool {
	t := &s.trace
	old := t.on
	if on && t.file != "" && !old {
		t.on = true
		s.SetState(max(t.state, 0))
		return old
	}
	if !on && old {
		s.SetState(StateIdle) // the end of the recorded section
	}
	t.on = on && t.file != ""
	return old
}

// OutputStateLog writes the state graph (Strata's OutputStateLog). Every
// PE must call it: each writes its own state changes to file.pe<N>, then
// after a barrier PE 0 reads them all, writes the SVG to file and removes
// them, and a second barrier lets every PE go on, recording afresh. The PEs
// must therefore share the file's directory (they do on the emulator; on
// separate PCs, a shared file system).
func (s *S) OutputStateLog() error {
	t := &s.trace
	if t.file == "" {
		return papers.Errorf("strata", s.self, "OutputStateLog without InitTrace")
	}
	end := uint64(time.Since(t.origin))
	werr := writeShard(shardName(t.file, s.self), end, t.events, t.dropped)
	ok, err := s.GlobalOR(werr != nil)
	if err != nil {
		return err
	}
	if werr != nil {
		return papers.Errorf("strata", s.self, "OutputStateLog: %w", werr)
	}
	if ok {
		return papers.Errorf("strata", s.self, "OutputStateLog: another PE could not write its state log")
	}
	var rerr error
	if s.self == 0 {
		rerr = s.mergeShards()
	}
	if err := s.Barrier(); err != nil {
		return err
	}
	t.events = t.events[:0]
	t.dropped = 0
	t.origin = time.Now()
	if t.state >= 0 && t.on {
		t.events = append(t.events, event{0, uint8(t.state)})
	}
	return rerr
}

func shardName(file string, pe int) string { return file + ".pe" + strconv.Itoa(pe) }

func writeShard(name string, end uint64, ev []event, dropped int) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "end %d dropped %d\n", end, dropped)
	for _, e := range ev {
		fmt.Fprintf(w, "%d %d\n", e.t, e.state)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// StateRow is one PE's state changes for RenderStateGraph.
type StateRow struct {
	Times   []uint64 // nanoseconds, non-decreasing
	States  []uint8  // the state entered at each time
	End     uint64   // when the row ends
	Dropped int      // changes lost to a full buffer
}

func readShard(name string) (StateRow, error) {
	var r StateRow
	f, err := os.Open(name)
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return r, fmt.Errorf("%s: empty", name)
	}
	if _, err := fmt.Sscanf(sc.Text(), "end %d dropped %d", &r.End, &r.Dropped); err != nil {
		return r, fmt.Errorf("%s: header: %w", name, err)
	}
	for sc.Scan() {
		var t uint64
		var st uint8
		if _, err := fmt.Sscanf(sc.Text(), "%d %d", &t, &st); err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.Times = append(r.Times, t)
		r.States = append(r.States, st)
	}
	return r, sc.Err()
}

func (s *S) mergeShards() error {
	rows := make([]StateRow, s.n)
	for pe := range rows {
		name := shardName(s.trace.file, pe)
		r, err := readShard(name)
		if err != nil {
			return fmt.Errorf("strata: OutputStateLog: %w", err)
		}
		rows[pe] = r
		os.Remove(name)
	}
	f, err := os.Create(s.trace.file)
	if err != nil {
		return fmt.Errorf("strata: OutputStateLog: %w", err)
	}
	w := bufio.NewWriter(f)
	RenderStateGraph(w, s.trace.title, rows, s.trace.names)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("strata: OutputStateLog: %w", err)
	}
	return f.Close()
}

// RenderStateGraph draws a state graph as SVG: one row per PE, a bar
// coloured by state along a time axis, and a legend of the states that
// occur, named by names (empty names print as "state N").
func RenderStateGraph(w io.Writer, title string, rows []StateRow, names [MaxStates]string) {
	g := newGraph(rows)
	width, height := g.left+g.plotW+g.right, g.legendY+22*math.Ceil(float64(g.nUsed)/4)+12
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	if title == "" {
		title = "Strata state graph"
	}
	fmt.Fprintf(w, `<text x="%.0f" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", g.left, html.EscapeString(title))
	fmt.Fprintf(w, `<text x="%.0f" y="40" fill="#555">%d PEs, %.4g %s; colour = state</text>`+"\n", g.left, len(rows), float64(g.end)/g.div, g.unit)
	for pe, r := range rows {
		g.row(w, pe, r)
	}
	g.axis(w)
	g.legend(w, names)
	fmt.Fprintln(w, "</svg>")
}

// graph is a state graph's layout.
type graph struct {
	left, right, top, plotW, rowH, gap float64
	end                                uint64 // the time the axis ends at
	unit                               string
	div                                float64 // ns per unit
	used                               [MaxStates]bool
	nUsed                              int
	axisY, legendY                     float64
}

func newGraph(rows []StateRow) *graph {
	g := &graph{left: 64, right: 24, top: 48, plotW: 900, rowH: 18, gap: 4}
	for _, r := range rows {
		g.end = max(g.end, r.End)
		for _, st := range r.States {
			g.used[st&(MaxStates-1)] = true
		}
	}
	g.end = max(g.end, 1)
	g.unit, g.div = timeUnit(g.end)
	for _, u := range g.used {
		if u {
			g.nUsed++
		}
	}
	g.axisY = g.top + float64(len(rows))*(g.rowH+g.gap) - g.gap + 6
	g.legendY = g.axisY + 44
	return g
}

// x is the horizontal position of time t.
func (g *graph) x(t uint64) float64 { return g.left + g.plotW*float64(t)/float64(g.end) }

// row draws PE pe's bar: a run of one state per rectangle, idle as the
// background.
func (g *graph) row(w io.Writer, pe int, r StateRow) {
	y := g.top + float64(pe)*(g.rowH+g.gap)
	fmt.Fprintf(w, `<text x="%.0f" y="%.1f" text-anchor="end">PE %d</text>`+"\n", g.left-8, y+g.rowH-5, pe)
	fmt.Fprintf(w, `<rect x="%.0f" y="%.1f" width="%.0f" height="%.0f" fill="%s"/>`+"\n", g.left, y, g.plotW, g.rowH, stateColors[0])
	for i := 0; i < len(r.Times); {
		st := r.States[i] & (MaxStates - 1)
		j := i + 1
		for j < len(r.Times) && r.States[j]&(MaxStates-1) == st {
			j++
		}
		stop := r.End
		if j < len(r.Times) {
			stop = r.Times[j]
		}
		if st != StateIdle && stop > r.Times[i] {
			fmt.Fprintf(w, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.0f" fill="%s"/>`+"\n", g.x(r.Times[i]), y, g.x(stop)-g.x(r.Times[i]), g.rowH, stateColors[st])
		}
		i = j
	}
	if r.Dropped > 0 {
		fmt.Fprintf(w, `<text x="%.0f" y="%.1f" font-size="10" fill="#b00">+%d changes lost</text>`+"\n", g.left+g.plotW+2, y+g.rowH-5, r.Dropped)
	}
}

// axis draws the time axis with about eight round ticks.
func (g *graph) axis(w io.Writer) {
	step := axis.Step(float64(g.end) / g.div / 8)
	fmt.Fprintf(w, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="black"/>`+"\n", g.left, g.axisY, g.left+g.plotW, g.axisY)
	for v := 0.0; v*g.div <= float64(g.end)*1.0000001; v += step {
		tx := g.x(uint64(v * g.div))
		fmt.Fprintf(w, `<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="black"/>`+"\n", tx, g.axisY, tx, g.axisY+5)
		fmt.Fprintf(w, `<text x="%.2f" y="%.1f" text-anchor="middle">%s</text>`+"\n", tx, g.axisY+18, strconv.FormatFloat(v, 'g', 4, 64))
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%.1f" text-anchor="middle">time (%s)</text>`+"\n", g.left+g.plotW/2, g.axisY+34, g.unit)
}

// legend names the states that occur, four to a line.
func (g *graph) legend(w io.Writer, names [MaxStates]string) {
	k := 0
	for st, u := range g.used {
		if !u {
			continue
		}
		lx := g.left + float64(k%4)*(g.plotW/4)
		ly := g.legendY + float64(k/4)*22
		name := names[st]
		if name == "" {
			name = "state " + strconv.Itoa(st)
		}
		fmt.Fprintf(w, `<rect x="%.0f" y="%.0f" width="14" height="14" fill="%s" stroke="#333" stroke-width="0.5"/>`+"\n", lx, ly, stateColors[st])
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f">%d %s</text>`+"\n", lx+20, ly+12, st, html.EscapeString(name))
		k++
	}
}

// timeUnit picks the unit the axis is labelled in.
func timeUnit(end uint64) (string, float64) {
	switch {
	case end >= 2e9:
		return "s", 1e9
	case end >= 2e6:
		return "ms", 1e6
	case end >= 2e3:
		return "µs", 1e3
	}
	return "ns", 1
}
