package emu

// NetNames returns the names of the board's nets as the hw netlist gives
// them ("nALL_S0", "PE2.D6", "I0", ...), in the order Levels reports their
// levels. Recorders (package emu/vcd) use the two to snapshot the board.
func (b *Board) NetNames() []string {
	names := make([]string, len(b.nets))
	for i := range b.nets {
		names[i] = b.nets[i].name
	}
	return names
}

// Levels returns the level of every net, indexed like NetNames, once
// everything written so far has settled (every write settles before it
// returns). It reuses dst's storage when it is large enough.
func (b *Board) Levels(dst []bool) []bool {
	b.lock()
	defer b.unlock()
	dst = dst[:0]
	for i := range b.nets {
		dst = append(dst, b.level(int32(i)))
	}
	return dst
}
