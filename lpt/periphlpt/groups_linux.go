package periphlpt

import (
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/host/v3/gpioioctl"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// chipGroups builds gpioioctl line sets for the outputs and for the inputs
// when each set lies on one gpiochip: one ioctl per register write or status
// read instead of one per pin. A nil group means per-pin access.
func chipGroups(pins Pins) (out, in gpio.Group) {
	return chipGroup(pins, true), chipGroup(pins, false)
}

func chipGroup(pins Pins, outputs bool) gpio.Group {
	var chip *gpioioctl.GPIOChip
	var names []string
	for i, l := range lpt.Lines {
		if l.Output() != outputs || pins[i] == nil {
			continue
		}
		pn := pins[i]
		if r, ok := pn.(gpio.RealPin); ok {
			pn = r.Real()
		}
		line, ok := pn.(*gpioioctl.GPIOLine)
		if !ok {
			return nil
		}
		c := chipOf(line)
		if c == nil || (chip != nil && c != chip) {
			return nil
		}
		chip = c
		names = append(names, line.Name())
	}
	if chip == nil {
		return nil
	}
	dir := gpioioctl.LineInput
	pull := gpio.PullUp
	if outputs {
		dir, pull = gpioioctl.LineOutput, gpio.PullNoChange
	}
	ls, err := chip.LineSet(dir, gpio.NoEdge, pull, names...)
	if err != nil {
		return nil // lines already requested one by one, say: per-pin access still works
	}
	return ls
}

func chipOf(line *gpioioctl.GPIOLine) *gpioioctl.GPIOChip {
	for _, c := range gpioioctl.Chips {
		for _, l := range c.Lines() {
			if l == line {
				return c
			}
		}
	}
	return nil
}
