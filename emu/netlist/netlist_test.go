package netlist_test

import (
	"reflect"
	"testing"

	"github.com/ttlpapers/ttlpapers/emu/netlist"
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// TestCompile: every connector has the 17 lines, the five status lines as
// inputs, and a driver for each PC-driven line the board connects; every
// index points into its table; and compiling twice gives the same circuit
// (processes sharing a board rely on it).
func TestCompile(t *testing.T) {
	for _, size := range hw.Sizes {
		h := hw.MustNew(size)
		c := netlist.Compile(h)
		if len(c.Connectors) != size {
			t.Fatalf("%d-PE board: %d connectors", size, len(c.Connectors))
		}
		for k, conn := range c.Connectors {
			if len(conn.Lines) != len(lpt.Lines) || len(conn.Inputs) != 5 {
				t.Fatalf("connector %d: %d lines, %d inputs", k, len(conn.Lines), len(conn.Inputs))
			}
			for _, cl := range conn.Outputs {
				if cl.Driver < 0 || c.Drivers[cl.Driver].Net != cl.Net || !cl.Line.Output() {
					t.Errorf("connector %d: output %v has driver %d on net %d", k, cl.Line, cl.Driver, cl.Net)
				}
			}
		}
		for i, g := range c.Gates {
			for _, n := range append(append([]int32{}, g.In...), g.En) {
				if n >= int32(len(c.Nets)) {
					t.Fatalf("gate %d reads net %d of %d", i, n, len(c.Nets))
				}
			}
		}
		for i, n := range c.Nets {
			if n.Multi != (len(n.Drivers) > 1) {
				t.Errorf("net %s: Multi %v with %d drivers", n.Name, n.Multi, len(n.Drivers))
			}
			if got := c.NetByName(n.Name); got != int32(i) {
				t.Errorf("NetByName(%q) = %d, want %d", n.Name, got, i)
			}
		}
		if c.NetByName("no such net") != -1 || c.Drivers[c.VCC].Net != c.NetByName(hw.VCC) {
			t.Error("NetByName or the supply drivers are wrong")
		}
		if !reflect.DeepEqual(c, netlist.Compile(hw.MustNew(size))) {
			t.Errorf("%d-PE board: two compiles differ", size)
		}
	}
}
