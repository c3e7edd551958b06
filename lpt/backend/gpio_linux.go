package backend

import (
	"fmt"
	"strings"

	"periph.io/x/conn/v3/gpio/gpioreg"
)

func gpioSummary() string {
	if err := hostInit(); err != nil {
		return err.Error()
	}
	pins := gpioreg.All()
	if len(pins) == 0 {
		return "no GPIO pins (periph loaded no GPIO driver on this host)"
	}
	names := make([]string, 0, 8)
	for i, p := range pins {
		if i == 8 {
			names = append(names, "…")
			break
		}
		names = append(names, p.Name())
	}
	return fmt.Sprintf("%d GPIO pins: %s", len(pins), strings.Join(names, ", "))
}
