//go:build linux && (amd64 || 386)

package linuxlpt

import (
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// inb and outb are the x86 IN and OUT instructions (inout_*.s).
func inb(port uint16) uint8
func outb(port uint16, v uint8)

// OpenDirect opens the SPP port at base (0x378, 0x278, 0x3bc) for direct
// I/O: it grants the process access to exactly the port's three registers
// with ioperm, on every thread (Go moves goroutines between threads), and
// checks that a port answers there by writing two patterns to the data
// register and reading them back (the old value is restored). Each register
// operation is then one IN or OUT instruction: no system call, no
// allocation.
//
// It needs root or CAP_SYS_RAWIO, a kernel with ioperm and without
// lockdown, and a program built with CGO_ENABLED=0; when any is missing the
// *AccessError says so.
func OpenDirect(base uint16) (lpt.Port, error) {
	if base > 0xffff-2 {
		return nil, accessError(MethodDirect, hexPort(base), "ioperm", unix.EINVAL)
	}
	if err := ioperm(base, 1); err != nil {
		return nil, accessError(MethodDirect, hexPort(base), "ioperm", err)
	}
	p := &directPort{base: base}
	if err := probeData(p); err != nil {
		ioperm(base, 0)
		return nil, accessError(MethodDirect, hexPort(base), "probe", err)
	}
	return p, nil
}

// ioperm sets the I/O permission of the three registers at base on every
// thread of the process: the permission is per thread and Go moves
// goroutines between threads. Only package syscall can run a system call on
// every thread (x/sys/unix.Ioperm affects the calling thread alone).
func ioperm(base uint16, on uintptr) error {
	if _, _, e := syscall.AllThreadsSyscall(unix.SYS_IOPERM, uintptr(base), 3, on); e != 0 {
		return e
	}
	return nil
}

type directPort struct {
	base   uint16
	closed atomic.Bool // after Close an IN/OUT would fault: refuse instead
	err    lpt.StickyError
}

func (p *directPort) ok() bool {
	if p.closed.Load() {
		p.err.Set(ErrClosed)
		return false
	}
	return true
}

func (p *directPort) WriteData(v uint8) {
	if p.ok() {
		outb(p.base+lpt.DataOffset, v)
	}
}

func (p *directPort) ReadData() uint8 {
	if !p.ok() {
		return 0xff
	}
	return inb(p.base + lpt.DataOffset)
}

func (p *directPort) ReadStatus() uint8 {
	if !p.ok() {
		return 0xff
	}
	return inb(p.base + lpt.StatusOffset)
}

func (p *directPort) WriteControl(v uint8) {
	if p.ok() {
		outb(p.base+lpt.ControlOffset, v)
	}
}

func (p *directPort) ReadControl() uint8 {
	if !p.ok() {
		return 0xff
	}
	return inb(p.base + lpt.ControlOffset)
}

func (p *directPort) Err() error { return p.err.Err() }

// Close drops the process's permission on the registers.
func (p *directPort) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	if err := ioperm(p.base, 0); err != nil {
		return accessError(MethodDirect, hexPort(p.base), "ioperm off", err)
	}
	return nil
}
