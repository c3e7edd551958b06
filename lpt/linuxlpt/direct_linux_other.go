//go:build linux && !(amd64 || 386)

package linuxlpt

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// OpenDirect needs the x86 IN and OUT instructions; on other CPUs it
// always fails: use OpenPPDev or a GPIO-backed port.
func OpenDirect(base uint16) (lpt.Port, error) {
	return nil, &AccessError{Method: MethodDirect, Port: hexPort(base), Op: "ioperm",
		Err: errors.New("direct port I/O needs an x86 CPU"),
		Fix: "use ppdev (ppdev:/dev/parport0) or GPIO pins (gpio:D0=GPIO17,…)"}
}
