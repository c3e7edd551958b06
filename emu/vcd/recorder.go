package vcd

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Source is a board a Recorder snapshots after every port operation:
// *emu.Board is one.
type Source interface {
	// NetNames names the nets, in the order Levels reports them.
	NetNames() []string
	// Levels returns every net's level once everything written so far has
	// settled, reusing dst's storage.
	Levels(dst []bool) []bool
	// Netlist is the board's netlist, which says which net each port
	// line is on.
	Netlist() *hw.Netlist
}

// Recorder records an untimed emulated run through port wrappers: each
// operation on a wrapped port, then a snapshot of every net, under one
// lock, one time step (1 ns in the file) per operation. Operations through
// ports it does not wrap are seen at the next recorded one.
type Recorder struct {
	mu       sync.Mutex
	w        *Writer
	src      Source
	lay      Layout
	levels   []bool
	prev     []bool
	lineNets [][]int // lineNets[k][i]: the net of PE k's line i, -1 when it has its own variable
	regs     [][2]uint8
	step     int64
	closed   bool
}

// NewRecorder starts recording src's run on w, one time step per port
// operation: wrap each port with Wrap, and Close the recorder when done.
// Each PC's port lines are the nets at its connector; a line the board does
// not connect is drawn from the register the PC writes.
func NewRecorder(w io.Writer, src Source) (*Recorder, error) {
	ports := portNets(src.Netlist())
	names := src.NetNames()
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	r := &Recorder{src: src}
	for k, lines := range ports {
		if len(lines) != len(lpt.Lines) {
			return nil, fmt.Errorf("vcd: PE %d: %d line nets, want one per port line (%d)", k, len(lines), len(lpt.Lines))
		}
		nets := make([]int, len(lines))
		for i, n := range lines {
			nets[i] = -1
			if n == "" {
				continue
			}
			j, ok := index[n]
			if !ok {
				return nil, fmt.Errorf("vcd: PE %d line %s is on net %q, which the board does not have", k, lpt.Lines[i].Name, n)
			}
			nets[i] = j
		}
		r.lineNets = append(r.lineNets, nets)
	}
	vw, err := NewWriter(w, "1ns", "untimed emulator run: one time step per port operation")
	if err != nil {
		return nil, err
	}
	r.w = vw
	r.lay = DeclareBoard(vw, names, len(ports), func(k, i int) int { return r.lineNets[k][i] })
	r.regs = make([][2]uint8, len(ports))
	r.levels = src.Levels(nil)
	r.prev = slices.Clone(r.levels)
	init := map[Var]Value{}
	for i, v := range r.levels {
		init[r.lay.Nets[i]] = Bool(v)
	}
	for k, pv := range r.lay.PEs {
		for _, v := range []Var{pv.Data, pv.Control, pv.Status} {
			init[v] = X
		}
		for i, n := range r.lineNets[k] {
			if n < 0 {
				init[pv.Lines[i]] = X
			}
		}
	}
	vw.Begin(init)
	return r, vw.err
}

// Wrap returns PE k's port p with every operation recorded. The wrapper
// passes Err, Close and ExplainStall (lpt.StallExplainer) through.
func (r *Recorder) Wrap(pe int, p lpt.Port) (lpt.Port, error) {
	if pe < 0 || pe >= len(r.lay.PEs) {
		return nil, fmt.Errorf("vcd: cannot record PE %d: the recorder was made for PEs 0 to %d", pe, len(r.lay.PEs)-1)
	}
	return &recorded{r: r, pe: pe, p: p}, nil
}

// Close ends the recording and flushes it; wrapped ports carry on
// unrecorded.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	return r.w.Close(r.step + 1)
}

// Ops returns the number of operations recorded.
func (r *Recorder) Ops() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.step
}

// op kinds, for after.
const (
	opWriteData = iota
	opWriteControl
	opReadStatus
	opRead // ReadData, ReadControl: no register change to show
)

// after records the operation just done on PE k and the nets it changed.
func (r *Recorder) after(k, op int, v uint8) {
	if r.closed {
		return
	}
	r.step++
	t, pv := r.step, &r.lay.PEs[k]
	switch op {
	case opWriteData, opWriteControl:
		reg, rv := lpt.Data, pv.Data
		if op == opWriteControl {
			reg, rv = lpt.Control, pv.Control
		}
		r.regs[k][op] = v
		r.w.Set(t, rv, Bits(uint64(v)))
		r.w.Fire(t, pv.Write)
		pins := lpt.OutputPins(r.regs[k][0], r.regs[k][1])
		for i, l := range lpt.Lines {
			if r.lineNets[k][i] < 0 && l.Reg == reg {
				r.w.Set(t, pv.Lines[i], Bool(pins.High(l.Pin)))
			}
		}
	case opReadStatus:
		r.w.Set(t, pv.Status, Bits(uint64(v)))
		r.w.Fire(t, pv.Read)
	default:
		r.w.Fire(t, pv.Read)
	}
	r.levels = r.src.Levels(r.levels)
	for i, lv := range r.levels {
		if lv != r.prev[i] {
			r.w.Set(t, r.lay.Nets[i], Bool(lv))
			r.prev[i] = lv
		}
	}
}

// recorded is a port whose operations a Recorder records.
type recorded struct {
	r  *Recorder
	pe int
	p  lpt.Port
}

// do runs one operation and records it, under the recorder's lock so
// that the board sees the operations in the order they are recorded.
func (q *recorded) do(op int, f func() uint8) uint8 {
	q.r.mu.Lock()
	defer q.r.mu.Unlock()
	v := f()
	q.r.after(q.pe, op, v)
	return v
}

func (q *recorded) WriteData(v uint8) {
	q.do(opWriteData, func() uint8 { q.p.WriteData(v); return v })
}

func (q *recorded) WriteControl(v uint8) {
	q.do(opWriteControl, func() uint8 { q.p.WriteControl(v); return v })
}

func (q *recorded) ReadStatus() uint8  { return q.do(opReadStatus, q.p.ReadStatus) }
func (q *recorded) ReadData() uint8    { return q.do(opRead, q.p.ReadData) }
func (q *recorded) ReadControl() uint8 { return q.do(opRead, q.p.ReadControl) }
func (q *recorded) Err() error         { return q.p.Err() }
func (q *recorded) Close() error       { return q.p.Close() }

// ExplainStall passes the wrapped port's explanation on.
func (q *recorded) ExplainStall() string {
	if x, ok := q.p.(lpt.StallExplainer); ok {
		return x.ExplainStall()
	}
	return ""
}

// portNets names the net each port line of each connector is on, "" for
// the lines the board does not connect.
func portNets(h *hw.Netlist) [][]string {
	nets := make([][]string, h.PEs)
	for k := range nets {
		for _, l := range lpt.Lines {
			name := ""
			if n := h.NetOf(h.PortNode(k, l.Pin)); n != nil {
				name = n.Name
			}
			nets[k] = append(nets[k], name)
		}
	}
	return nets
}
