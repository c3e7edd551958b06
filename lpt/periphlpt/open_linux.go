package periphlpt

import (
	"errors"
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// openLPT opens LPTn (1-3) through ppdev, else by direct I/O at its usual
// base address.
func openLPT(n int) (lpt.Port, error) {
	base := [...]uint16{lpt.BaseLPT1, lpt.BaseLPT2, lpt.BaseLPT3}[n-1]
	p, errPP := lpt.OpenPPDev(fmt.Sprintf("/dev/parport%d", n-1))
	if errPP == nil {
		return p, nil
	}
	p, errIO := lpt.OpenDirect(base)
	if errIO == nil {
		return p, nil
	}
	return nil, errors.Join(errPP, errIO)
}
