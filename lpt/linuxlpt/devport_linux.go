package linuxlpt

import (
	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// DevPortPath is the kernel's byte-per-I/O-port device.
const DevPortPath = "/dev/port"

// OpenDevPort opens the SPP port at base through /dev/port, where the byte
// at offset N is I/O port N: a fallback for kernels or programs where
// ioperm is unavailable (a cgo build, say). It needs root or CAP_SYS_RAWIO
// and a kernel without lockdown, and checks that the data register reads
// back. Each register operation is one pread or pwrite system call; errors
// after opening go to the sticky Err.
func OpenDevPort(base uint16) (lpt.Port, error) {
	if base > 0xffff-2 {
		return nil, accessError(MethodDevPort, hexPort(base), "open", unix.EINVAL)
	}
	fd, err := unix.Open(DevPortPath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, accessError(MethodDevPort, hexPort(base), "open "+DevPortPath, err)
	}
	p := &devPort{fd: fd, base: int64(base)}
	if err := probeData(p); err != nil {
		p.Close()
		return nil, accessError(MethodDevPort, hexPort(base), "probe", err)
	}
	return p, nil
}

type devPort struct {
	fd   int
	base int64
	err  lpt.StickyError
}

// read and write transfer through a byte of their own, so a signal
// handler's writes may run while the PE's goroutine reads (spmd/port).
func (p *devPort) read(off int64) uint8 {
	if p.fd < 0 {
		p.err.Set(ErrClosed)
		return 0xff
	}
	var buf [1]byte
	if n, err := unix.Pread(p.fd, buf[:], p.base+off); n != 1 {
		p.fail("pread", err)
		return 0xff
	}
	return buf[0]
}

func (p *devPort) write(off int64, v uint8) {
	if p.fd < 0 {
		p.err.Set(ErrClosed)
		return
	}
	buf := [1]byte{v}
	if n, err := unix.Pwrite(p.fd, buf[:], p.base+off); n != 1 {
		p.fail("pwrite", err)
	}
}

func (p *devPort) fail(op string, err error) {
	if err == nil {
		err = unix.EIO // a short transfer
	}
	p.err.Set(accessError(MethodDevPort, hexPort(uint16(p.base)), op, err))
}

func (p *devPort) WriteData(v uint8)    { p.write(lpt.DataOffset, v) }
func (p *devPort) ReadData() uint8      { return p.read(lpt.DataOffset) }
func (p *devPort) ReadStatus() uint8    { return p.read(lpt.StatusOffset) }
func (p *devPort) WriteControl(v uint8) { p.write(lpt.ControlOffset, v) }
func (p *devPort) ReadControl() uint8   { return p.read(lpt.ControlOffset) }
func (p *devPort) Err() error           { return p.err.Err() }

func (p *devPort) Close() error {
	if p.fd < 0 {
		return nil
	}
	err := unix.Close(p.fd)
	p.fd = -1
	if err != nil {
		return accessError(MethodDevPort, hexPort(uint16(p.base)), "close", err)
	}
	return nil
}
