package kicad

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/hw"
)

// holePart is a mounting hole as the schematic draws it: KiCad's
// Mechanical:MountingHole symbol, out of the BOM, linked to the hole's
// footprint, its value the footprint's. With a symbol the footprint on
// the board is its library copy: one on the board alone would have to be
// marked board-only, an attribute the library's has not, so that pcbnew
// would call it out of date.
var holePart = &hw.Part{Name: "MountingHole_3.2mm_M3", Description: "M3 mounting hole, 3.2 mm, no annular ring",
	Symbol: "Mechanical:MountingHole", Footprint: holeFootprint}

// mountingHoles are the board's holes as parts, H1 to H4 (pcbLayout.holes:
// one in each corner), on the root sheet.
func mountingHoles() []*hw.Component {
	out := make([]*hw.Component, 4)
	for i := range out {
		out[i] = &hw.Component{Ref: fmt.Sprintf("H%d", i+1), Part: holePart, Role: "mounting hole", Group: holeGroup}
	}
	return out
}

// holeGroup is the schematic area of the mounting holes.
const holeGroup = "holes"
