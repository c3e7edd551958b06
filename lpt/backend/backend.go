// Package backend opens real parallel ports by spec. This is a placeholder
// until the ports branch provides the real package.
package backend

import (
	"fmt"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Open opens the port a spec names (port:0x378, ppdev:/dev/parport0, ...).
func Open(spec string) (lpt.Port, error) {
	return nil, fmt.Errorf("backend: cannot open %q: real port backends are not built into this version", spec)
}
