//go:build !linux

package shm

import (
	"errors"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/substrate"
)

// CreateDataNet needs Linux, as the shared board does.
func CreateDataNet(board string, pes int) error {
	return errors.New("spmd: shm: the shared-memory data network needs Linux")
}

type dataNet struct{ ep *am.Endpoint }

// openDataNet: boards in shared memory are Linux-only (emu.OpenShared), so
// no PE gets here.
func openDataNet(string, substrate.Options) (*dataNet, error) { return nil, nil }

func (d *dataNet) abort(error)  {}
func (d *dataNet) close() error { return nil }
