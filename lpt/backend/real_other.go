//go:build !linux

package backend

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/lpt"
)

var errNotLinux = errors.New("backend: real printer ports are supported on Linux only; use gpio: or the emulator")

func openDirect(uint16) (lpt.Port, error)  { return nil, errNotLinux }
func openDevPort(uint16) (lpt.Port, error) { return nil, errNotLinux }
func openPPDev(string) (lpt.Port, error)   { return nil, errNotLinux }
func findPorts() []Found                   { return nil }
func gpioSummary() string                  { return "GPIO probing is supported on Linux only" }
