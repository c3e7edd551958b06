//go:build !linux

package periphlpt

import "periph.io/x/conn/v3/gpio"

func chipGroups(Pins) (out, in gpio.Group) { return nil, nil }
