// Package gpiomap says which GPIO pin serves each printer-port line when a
// PE drives the board from GPIO pins instead of a printer port: the
// mapping the gpio: port spec names, and the Raspberry Pi's 40-pin header,
// which the GPIO driver (lpt/periphlpt) and the Pi adapter board (hw) both
// take from here. It needs no GPIO library, so the board's generator and
// the emulator do not link one.
package gpiomap

import (
	"fmt"
	"strings"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Mapping names a GPIO pin (as gpioreg knows it: "GPIO17") for each port
// line, indexed like lpt.Lines; "" is not connected.
type Mapping [len(lpt.Lines)]string

// ParseMapping parses "D0=GPIO17,D1=GPIO18,…,Busy=GPIO5": a
// comma-separated list of LINE=PIN, where LINE is any name lpt.LineByName
// accepts (D0-D7, nStrobe, …, or the TTL_PAPERS names S0, RDY, …, or
// pin<N>) and PIN a gpioreg pin name. Every line except the reserved
// nSelectIn must be given, and no pin may serve two lines. The name of a
// board's own wiring stands for its whole mapping: "pi" is RaspberryPi.
func ParseMapping(s string) (Mapping, error) {
	if strings.EqualFold(strings.TrimSpace(s), PiName) {
		return RaspberryPi, nil
	}
	return parse(s)
}

func parse(s string) (Mapping, error) {
	var m Mapping
	users := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, pinName, ok := strings.Cut(item, "=")
		name, pinName = strings.TrimSpace(name), strings.TrimSpace(pinName)
		if !ok || name == "" || pinName == "" {
			return m, fmt.Errorf("gpiomap: mapping item %q: want LINE=PIN, like D0=GPIO17", item)
		}
		l, err := lpt.LineByName(name)
		if err != nil {
			return m, err
		}
		i := lineIndex(l)
		if m[i] != "" {
			return m, fmt.Errorf("gpiomap: line %s is mapped twice (%s and %s)", l.Name, m[i], pinName)
		}
		if other, dup := users[strings.ToUpper(pinName)]; dup {
			return m, fmt.Errorf("gpiomap: pin %s is mapped to both %s and %s", pinName, other, l.Name)
		}
		users[strings.ToUpper(pinName)] = l.Name
		m[i] = pinName
	}
	var missing []string
	for i, l := range lpt.Lines {
		if m[i] == "" && !Optional(l) {
			missing = append(missing, l.Name)
		}
	}
	if missing != nil {
		return m, fmt.Errorf("gpiomap: mapping %q lacks lines %s (every line but nSelectIn is needed)", s, strings.Join(missing, ", "))
	}
	return m, nil
}

// String formats m as ParseMapping reads it.
func (m Mapping) String() string {
	var parts []string
	for i, l := range lpt.Lines {
		if m[i] != "" {
			parts = append(parts, l.Name+"="+m[i])
		}
	}
	return strings.Join(parts, ",")
}

// Optional reports whether l may be left unmapped: only the reserved
// nSelectIn line.
func Optional(l lpt.Line) bool { return l.Mask == lpt.ControlSelectIn && l.Reg == lpt.Control }

func lineIndex(l lpt.Line) int {
	for i := range lpt.Lines {
		if lpt.Lines[i].Pin == l.Pin {
			return i
		}
	}
	panic("gpiomap: line not in lpt.Lines")
}
