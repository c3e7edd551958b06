// Package netlist compiles a board's netlist (package hw) into the
// index-based form the simulators run: gates, the drivers of their
// outputs, nets, and each connector's cable lines, every one a small
// integer. The untimed board (package emu) and the timed board (package
// emu/timed) simulate the same Circuit, so that what one settles to the
// other settles to with zero delays.
//
// The indices are deterministic: every process compiling the same netlist
// agrees on them, and on the memory layout of a board shared between
// processes that derives from them.
package netlist

import (
	"github.com/ttlpapers/ttlpapers/hw"
	"github.com/ttlpapers/ttlpapers/lpt"
)

// Circuit is a compiled netlist. It is immutable once compiled and shared
// by every simulation of the board.
type Circuit struct {
	Nets       []Net
	Drivers    []Driver
	Gates      []Gate // each component's units in turn, in netlist order
	VCC, GND   int32  // the supply drivers
	Connectors []Connector
	index      map[string]int32 // net by name
}

// Gate is one unit of a part.
type Gate struct {
	Fn    hw.Func
	In    []int32 // nets (-1: unconnected, floats high); DFF: D, CLK, PRE, CLR
	En    int32   // buffer enable net, -1 for none
	EnLow bool
	Out   int32 // driver index, -1 when the output pin is not connected
	OutN  int32 // DFF nQ driver
}

// Driver is one output onto a net: a gate's, a PC's pin, or a supply.
type Driver struct {
	Net int32
}

// Net is one net and who drives and reads it.
type Net struct {
	Name    string
	Drivers []int32
	Loads   []int32 // gates reading this net
	Readers []int32 // connectors whose status pins read this net
	Multi   bool    // more than one driver: can see contention
}

// CableLine is one port line of one PE as the board sees it.
type CableLine struct {
	Line   lpt.Line
	Net    int32 // -1 when the board does not connect the pin
	Driver int32 // PC-driven lines: the PC's driver on that net, -1 for none
}

// Connector is one PE's connector: its cable lines in lpt.Lines order, and
// the same lines split by direction.
type Connector struct {
	Lines   []CableLine
	Outputs []CableLine // the PC-driven lines the board connects
	Inputs  []CableLine // the status lines
}

// Compile compiles a netlist: its nets, then each component's gates, then
// each PE's connector.
func Compile(h *hw.Netlist) *Circuit {
	c := &Circuit{index: map[string]int32{}}
	nets := netIndex{h: h, idx: map[*hw.Net]int32{}}
	for _, n := range h.Nets {
		nets.idx[n] = int32(len(c.Nets))
		c.index[n.Name] = nets.idx[n]
		c.Nets = append(c.Nets, Net{Name: n.Name})
	}
	c.VCC = c.addDriver(nets.idx[h.Net(hw.VCC)])
	c.GND = c.addDriver(nets.idx[h.Net(hw.GND)])
	for _, comp := range h.Components {
		for _, u := range comp.Part.Units {
			c.addGate(nets, comp.Ref, u)
		}
	}
	for k := range h.PEs {
		c.addConnector(nets, k)
	}
	for i := range c.Nets {
		c.Nets[i].Multi = len(c.Nets[i].Drivers) > 1
	}
	return c
}

// netIndex numbers a netlist's nets as the Circuit does.
type netIndex struct {
	h   *hw.Netlist
	idx map[*hw.Net]int32
}

// of is the net of pin pin of component ref, -1 when it is unconnected.
func (x netIndex) of(ref string, pin int) int32 {
	if n := x.h.NetOf(hw.Node{Ref: ref, Pin: pin}); n != nil {
		return x.idx[n]
	}
	return -1
}

// addGate adds unit u of component ref, its output drivers, and it as a
// load of the nets it reads.
func (c *Circuit) addGate(nets netIndex, ref string, u hw.Unit) {
	g := Gate{Fn: u.Func, En: -1, OutN: -1}
	for _, p := range u.In {
		g.In = append(g.In, nets.of(ref, p))
	}
	switch u.Func {
	case hw.FuncDFF:
		g.In = append(g.In, nets.of(ref, u.Preset), nets.of(ref, u.Clear))
		g.OutN = c.addDriver(nets.of(ref, u.NQ))
	case hw.FuncBuffer:
		if u.Enable != 0 {
			g.En, g.EnLow = nets.of(ref, u.Enable), u.EnableLow
		}
	}
	g.Out = c.addDriver(nets.of(ref, u.Out))
	gi := int32(len(c.Gates))
	for _, n := range append(append([]int32(nil), g.In...), g.En) {
		if n >= 0 && !contains(c.Nets[n].Loads, gi) {
			c.Nets[n].Loads = append(c.Nets[n].Loads, gi)
		}
	}
	c.Gates = append(c.Gates, g)
}

// addConnector adds PE k's connector: a driver for each PC-driven line the
// board connects, and PE k as a reader of each status line's net.
func (c *Circuit) addConnector(nets netIndex, k int) {
	var conn Connector
	for _, l := range lpt.Lines {
		pin := nets.h.PortNode(k, l.Pin)
		cl := CableLine{Line: l, Net: nets.of(pin.Ref, pin.Pin), Driver: -1}
		if l.Output() {
			cl.Driver = c.addDriver(cl.Net)
			if cl.Driver >= 0 {
				conn.Outputs = append(conn.Outputs, cl)
			}
		} else {
			conn.Inputs = append(conn.Inputs, cl)
			if cl.Net >= 0 {
				c.Nets[cl.Net].Readers = append(c.Nets[cl.Net].Readers, int32(k))
			}
		}
		conn.Lines = append(conn.Lines, cl)
	}
	c.Connectors = append(c.Connectors, conn)
}

// addDriver adds a driver onto net n, or returns -1 for an unconnected pin.
func (c *Circuit) addDriver(n int32) int32 {
	if n < 0 {
		return -1
	}
	d := int32(len(c.Drivers))
	c.Drivers = append(c.Drivers, Driver{Net: n})
	c.Nets[n].Drivers = append(c.Nets[n].Drivers, d)
	return d
}

// NetByName returns the index of the net named name, or -1.
func (c *Circuit) NetByName(name string) int32 {
	if i, ok := c.index[name]; ok {
		return i
	}
	return -1
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
