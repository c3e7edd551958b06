package vcd

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Layout is how a board appears in a VCD file: scope "board" holds every
// net under its hw name ("nALL_S0", "PE2.D6", "I0"); scope "pc" holds one
// scope per PE ("PE2") with its 17 port lines as the PC sees them (lpt's
// names: "D6", "nAck", "Busy", ...), the data, control and status
// registers as the program wrote and read them, and an event at each read
// and each write.
type Layout struct {
	Nets []Var
	PEs  []PEVars
}

// PEVars are the variables of one PE's port.
type PEVars struct {
	Lines                 [len(lpt.Lines)]Var // indexed like lpt.Lines
	Data, Control, Status Var
	Read, Write           Var
}

// DeclareBoard declares the layout of a board with the given nets and pes
// ports on w. lineNet(k, i) is the index in nets of the net PE k's line
// lpt.Lines[i] is on, to declare the line as another name of that net, or
// -1 to give the line a variable of its own (a line the board does not
// connect, or every line when the cable between PC and board is modelled).
func DeclareBoard(w *Writer, nets []string, pes int, lineNet func(pe, line int) int) Layout {
	var lay Layout
	w.Scope("board")
	for _, n := range nets {
		lay.Nets = append(lay.Nets, w.Wire(n, 1))
	}
	w.Upscope()
	w.Scope("pc")
	for k := range pes {
		w.Scope(fmt.Sprintf("PE%d", k))
		var pv PEVars
		for i, l := range lpt.Lines {
			if n := lineNet(k, i); n >= 0 && n < len(lay.Nets) {
				w.Alias(l.Name, lay.Nets[n])
				pv.Lines[i] = lay.Nets[n]
			} else {
				pv.Lines[i] = w.Wire(l.Name, 1)
			}
		}
		pv.Data, pv.Control, pv.Status = w.Reg("data", 8), w.Reg("control", 8), w.Reg("status", 8)
		pv.Read, pv.Write = w.Event("read"), w.Event("write")
		lay.PEs = append(lay.PEs, pv)
		w.Upscope()
	}
	w.Upscope()
	return lay
}
