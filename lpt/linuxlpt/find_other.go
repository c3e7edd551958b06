//go:build !linux

package linuxlpt

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/lpt"
)

var errNotLinux = errors.New("lpt: real printer ports are supported on Linux only; use a GPIO-backed port or the emulator")

// FindPorts lists the parallel ports the system knows of: none here, as
// real ports are supported on Linux only.
func FindPorts() []Found { return nil }

// OpenPPDev fails: ppdev is Linux's.
func OpenPPDev(string) (lpt.Port, error) { return nil, errNotLinux }

// OpenDirect fails: direct port I/O is supported on Linux only.
func OpenDirect(uint16) (lpt.Port, error) { return nil, errNotLinux }

// OpenDevPort fails: /dev/port is Linux's.
func OpenDevPort(uint16) (lpt.Port, error) { return nil, errNotLinux }
