package timed

import (
	"errors"
	"io"
	"time"

	"github.com/ttlpapers/ttlpapers/emu/vcd"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Recording is a timed board's run being recorded as a VCD file.
type Recording struct {
	b   *Board
	w   *vcd.Writer
	lay vcd.Layout
}

// RecordVCD records the board's run as a VCD file on w, in nanoseconds of
// simulated time: every net under its hw name (scope "board"), and each
// PC's port lines as the PC sees them, at its end of the cable, with its
// registers and an event at each operation (scope "pc"). Start it before
// the run and Close it after.
func (b *Board) RecordVCD(w io.Writer) (*Recording, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rec != nil {
		return nil, errors.New("timed: the board is already being recorded")
	}
	vw, err := vcd.NewWriter(w, "1ns", "timed emulator run: simulated time in ns")
	if err != nil {
		return nil, err
	}
	r := &Recording{b: b, w: vw}
	r.lay = vcd.DeclareBoard(vw, b.NetNames(), len(b.ports), func(int, int) int { return -1 })
	init := map[vcd.Var]vcd.Value{}
	for n, v := range b.level {
		init[r.lay.Nets[n]] = vcd.Bool(v)
	}
	for k, pv := range r.lay.PEs {
		p := &b.ports[k]
		for i, l := range lpt.Lines {
			v := p.pins.High(l.Pin)
			if !l.Output() {
				v = b.pcIn[k*len(lpt.Lines)+i].cur&high != 0
			}
			init[pv.Lines[i]] = vcd.Bool(v)
		}
		init[pv.Data], init[pv.Control], init[pv.Status] = vcd.Bits(uint64(p.data)), vcd.Bits(uint64(p.control)), vcd.X
	}
	vw.Begin(init)
	b.rec = r
	return r, nil
}

func (r *Recording) net(t time.Duration, n int32, v bool) {
	r.w.Set(int64(t), r.lay.Nets[n], vcd.Bool(v))
}

func (r *Recording) line(t time.Duration, k, i int, v bool) {
	r.w.Set(int64(t), r.lay.PEs[k].Lines[i], vcd.Bool(v))
}

func (r *Recording) op(t time.Duration, k int, kind, v uint8) {
	pv := &r.lay.PEs[k]
	switch kind {
	case opWriteData:
		r.w.Set(int64(t), pv.Data, vcd.Bits(uint64(v)))
	case opWriteControl:
		r.w.Set(int64(t), pv.Control, vcd.Bits(uint64(v)))
	case opReadStatus:
		r.w.Set(int64(t), pv.Status, vcd.Bits(uint64(v)))
	}
	if kind == opWriteData || kind == opWriteControl {
		r.w.Fire(int64(t), pv.Write)
	} else {
		r.w.Fire(int64(t), pv.Read)
	}
}

// Close stops recording and flushes the file. After a run (every port
// closed) it first lets the board settle, so that the changes still on
// their way when the last PE finished are in the file too.
func (r *Recording) Close() error {
	b := r.b
	b.mu.Lock()
	c := b.cosim
	b.mu.Unlock()
	quiet := c == nil || c.done() // c.mu before b.mu, as dispatch takes them
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rec != r {
		return nil
	}
	if quiet {
		b.runQuiet()
	}
	b.rec = nil
	return r.w.Close(int64(b.now) + 100)
}
