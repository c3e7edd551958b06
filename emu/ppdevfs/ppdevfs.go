// Package ppdevfs serves an emulated TTL_PAPERS board as Linux ppdev files.
//
// Mount puts one file per PE (parport0, parport1, …) in a directory through
// FUSE. Each file answers the ppdev ioctls (PPCLAIM, PPWDATA, PPRSTATUS, …)
// the way /dev/parportN on a PC with a parport_pc port does, with the values
// crossing as raw register bits, and maps them onto the PE's emu.Port, which
// applies the SPP pin inversions. Anything that speaks ppdev can therefore
// drive the emulated board as if it were wired to a real port — in
// particular QEMU, whose "-chardev parallel,path=FILE -device isa-parallel"
// forwards every guest access to I/O port 0x378-0x37a as one of these
// ioctls, so an unmodified program doing ioperm and inb/outb inside a virtual
// machine talks to the board (hardware in the loop).
//
// Differences from a real ppdev device, all outside what QEMU or TTL_PAPERS
// use: PPCLAIM waits for another holder to release for at most ClaimWait and
// then fails with EBUSY (after 100 ms at most following PPEXCL); there is no IEEE 1284 peripheral on the cable, so
// PPNEGOT succeeds only for compatibility mode; read and write (IEEE 1284
// transfers) are not supported; interrupts are not delivered.
package ppdevfs

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Options configures Mount.
type Options struct {
	// PEs is the number of files to serve, parport0 to parport<PEs-1>. Zero
	// means every connector of the board.
	PEs int
	// ClaimWait bounds how long PPCLAIM waits for another open file to
	// release the port. Zero means one second.
	ClaimWait time.Duration
	// Log receives one line per unexpected ioctl and per refused request.
	// Nil means the standard logger.
	Log *log.Logger
	// Debug logs every FUSE request (very verbose).
	Debug bool
	// Wrap, when set, wraps each PE's port as a file claims it:
	// papersctl emu serve --vcd records the run through it.
	Wrap func(pe int, p lpt.Port) lpt.Port
}

// FaultsFile is the name of the board's faults file in the mounted
// directory: reading it lists the board's faults, one a line; a line written
// to it changes them on the running board (emu.Board.Change: PE1.D3=stuck0,
// PE1=unplug, PE1=replug, PE1=repair), so that a fault can be rehearsed on a
// board that programs are using.
const FaultsFile = "faults"

// ErrRefused is the error of ChangeFaults when the served board refused a
// change (a PE it does not have); the server's log says why.
var ErrRefused = errors.New("the served board refused the change")

// ChangeFaults writes each change, in order, to the faults file of the board
// served in dir (FaultsFile: PE1.D3=stuck0, PE1=unplug, PE1=replug,
// PE1=repair) and returns the board's faults afterwards. It is how a person
// (papersctl emu fault) and the tests change the faults of a board that
// programs are using, whoever serves it. An error naming a change wraps
// ErrRefused; one from opening the file means nothing serves a board in
// dir.
func ChangeFaults(dir string, changes ...string) ([]string, error) {
	path := filepath.Join(dir, FaultsFile)
	for _, c := range changes {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("ppdevfs: no served board in %s: %w", dir, err)
		}
		_, err = f.Write([]byte(c + "\n"))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("ppdevfs: %s: %w (%w)", c, ErrRefused, err)
		}
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ppdevfs: no served board in %s: %w", dir, err)
	}
	return strings.Fields(string(cur)), nil
}

// FileName is the name of PE k's file in the mounted directory.
func FileName(pe int) string { return fmt.Sprintf("parport%d", pe) }

// Stats is what a PE's file has served.
type Stats struct {
	Ioctls      uint64        // ioctls answered, including refused ones
	Unknown     uint64        // ioctls answered with ENOTTY
	First, Last time.Time     // first and last ioctl
	Busy        time.Duration // Last - First
}

// PerOp returns the mean time between ioctls, an upper bound on the cost
// of one port operation through the loop when the client was busy.
func (s Stats) PerOp() time.Duration {
	if s.Ioctls < 2 {
		return 0
	}
	return s.Busy / time.Duration(s.Ioctls-1)
}
