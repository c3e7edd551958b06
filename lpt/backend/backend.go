// Package backend opens real printer ports from a spec string.
package backend

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Open opens the port named by spec ("port:0x378", "ppdev:/dev/parport0", "gpio:<mapping>").
func Open(spec string) (lpt.Port, error) {
	return nil, errors.New("backend: real ports are not built into this binary yet")
}
