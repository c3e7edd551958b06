package shm

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/shmnet"
	"github.com/ttlpapers/ttlpapers/substrate"
)

// CreateDataNet makes the data network of a pes-PE board at board (the
// launcher's part, beside the board it creates), replacing a leftover of an
// earlier run of the same name: the board was just created, so any data
// network beside it is stale.
func CreateDataNet(board string, pes int) error {
	path := DataNetPath(board)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return shmnet.Create(path, pes)
}

// WaitDataNet waits up to timeout for the data network beside board, which
// the run that created the board makes right after it (a launcher joining
// that board's run calls it before starting its PEs).
func WaitDataNet(board string, timeout time.Duration) error {
	return shmnet.Wait(DataNetPath(board), timeout)
}

// dataNet is a PE process's endpoint on the data network beside its board.
type dataNet struct {
	ep *am.Endpoint
	sh *shmnet.Net
}

// openDataNet attaches PE o.PE to the data network beside board, if the
// launcher made one (nil, nil if not: a program that uses it then gets
// am.ErrNoNetwork).
func openDataNet(board string, o substrate.Options) (*dataNet, error) {
	sh, err := shmnet.Open(DataNetPath(board), o.PE)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spmd: shm: PE %d: %w", o.PE, err)
	}
	return &dataNet{ep: am.NewEndpoint(sh, am.Options{Timeout: o.Timeout}), sh: sh}, nil
}

// abort leaves the network because the PE failed: the others' waits on it
// end in an *am.GoneError carrying cause. The mapping stays until the
// process exits, which it is about to.
func (d *dataNet) abort(cause error) { d.ep.Abort(cause) }

// close handles what has arrived and leaves.
func (d *dataNet) close() error {
	err := d.ep.Close()
	if cerr := d.sh.Close(); err == nil {
		err = cerr
	}
	return err
}
