// Package boardflag holds what several papersctl commands share about the
// board: the --port help and opening, the repeatable --inject fault flag,
// the --vcd recording and the front panel's LED line.
package boardflag

import (
	"fmt"
	"strings"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
)

// PortUsage is the help of a --port flag: what the port is for, and the
// forms of spec it takes.
func PortUsage(what string) string {
	return what + ": port:0x378 (or 0x378), ppdev:/dev/parport0 (or /dev/parport0), devport:0x378,\n" +
		"gpio:pi (a Raspberry Pi wired as docs/hardware.md shows) or gpio:D0=GPIO17,D1=GPIO18,…"
}

// OpenPort opens the port --port names. When it cannot, papersctl probe
// is where to look next.
func OpenPort(spec string) (lpt.Port, error) {
	p, err := backend.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("%w (papersctl probe lists the ports this machine has and what works on each)", err)
	}
	return p, nil
}

// FrontPanel names every PE's LED colour: "PE 0 green, PE 1 red, …".
func FrontPanel(board *emu.Board, pes int) string {
	leds := make([]string, pes)
	for k := range leds {
		leds[k] = fmt.Sprintf("PE %d %v", k, board.LED(k))
	}
	return strings.Join(leds, ", ")
}
