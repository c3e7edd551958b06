package hw

import "testing"

// TestEvalDFF checks the 74LS74 function table of the datasheet, row by
// row, from both stored states.
func TestEvalDFF(t *testing.T) {
	const (
		d   = 1 << 0
		clk = 1 << 1
		pre = 1 << 2 // nPRE high: not asserted
		clr = 1 << 3 // nCLR high: not asserted
	)
	for _, old := range []DFFState{{false, false}, {true, false}, {false, true}, {true, true}} {
		clocked := old.Q // clock high with D high: Q follows D on a rising edge only
		if !old.Clk {
			clocked = true
		}
		for _, c := range []struct {
			name  string
			in    uint32
			q, nq bool
		}{
			{"preset", clr | d | clk, true, false},
			{"clear", pre | d | clk, false, true},
			{"preset and clear", d | clk, true, true},
			{"clock high", pre | clr | clk | d, clocked, !clocked},
			{"clock low", pre | clr | d, old.Q, !old.Q},
		} {
			_, q, nq, next := FuncDFF.Eval(c.in, 4, true, old)
			if q != c.q || nq != c.nq {
				t.Errorf("%s from %+v: Q=%v nQ=%v, want %v %v", c.name, old, q, nq, c.q, c.nq)
			}
			if next.Clk != (c.in&clk != 0) {
				t.Errorf("%s from %+v: remembered clock %v", c.name, old, next.Clk)
			}
			if c.name != "preset and clear" && next.Q != q {
				t.Errorf("%s from %+v: stored %v, drives %v", c.name, old, next.Q, q)
			}
		}
	}
	// A rising edge with D low clears Q.
	if _, q, _, _ := FuncDFF.Eval(pre|clr|clk, 4, true, DFFState{Q: true}); q {
		t.Error("rising edge with D low left Q high")
	}
}

func TestEvalGates(t *testing.T) {
	for in := uint32(0); in < 16; in++ {
		if on, out, _, _ := FuncNAND.Eval(in, 4, true, DFFState{}); !on || out != (in != 15) {
			t.Errorf("NAND4(%04b) = %v (drives %v)", in, out, on)
		}
	}
	for in := uint32(0); in < 4; in++ {
		if _, out, _, _ := FuncOR.Eval(in, 2, true, DFFState{}); out != (in != 0) {
			t.Errorf("OR2(%02b) = %v", in, out)
		}
	}
	for _, en := range []bool{false, true} {
		for in := uint32(0); in < 2; in++ {
			if on, out, _, _ := FuncBuffer.Eval(in, 1, en, DFFState{}); on != en || out != (in == 1) {
				t.Errorf("buffer(%d, enabled %v) drives %v at %v", in, en, on, out)
			}
		}
	}
}
