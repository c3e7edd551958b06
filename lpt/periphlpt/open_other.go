//go:build !linux

package periphlpt

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/lpt"
)

func openLPT(int) (lpt.Port, error) {
	return nil, errors.New("real parallel ports are supported on Linux only")
}
