package linuxlpt

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// OpenPPDev opens a port through the kernel's ppdev driver (/dev/parport0,
// ...): the way for ordinary users in the device's group (usually lp), and
// for PCI/PCIe parallel cards at any address. It claims the port
// exclusively (PPEXCL, then PPCLAIM), so no other driver can use it until
// Close releases it, and checks that the data register reads back.
//
// Each register operation is one ioctl. Errors after opening go to the
// sticky Err; the operation then reads 0xff.
func OpenPPDev(path string) (lpt.Port, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, accessError(MethodPPDev, path, "open", err)
	}
	p := &ppdevPort{fd: fd, path: path}
	for _, step := range [...]struct {
		name string
		req  uintptr
	}{{"PPEXCL", PPEXCL}, {"PPCLAIM", PPCLAIM}} {
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), step.req, 0); e != 0 {
			unix.Close(fd)
			return nil, accessError(MethodPPDev, path, step.name, e)
		}
	}
	p.claimed = true
	if err := probeData(p); err != nil {
		p.Close()
		return nil, accessError(MethodPPDev, path, "probe", err)
	}
	return p, nil
}

type ppdevPort struct {
	fd      int
	path    string
	claimed bool
	err     lpt.StickyError
}

// ioctl runs one register request on *v, the caller's own byte: each
// call has its own argument, so a signal handler's writes may run while
// the PE's goroutine reads the status (spmd/port's departure). It does
// not allocate.
func (p *ppdevPort) ioctl(req uintptr, name string, v *uint8) bool {
	if p.fd < 0 {
		p.err.Set(ErrClosed)
		return false
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(p.fd), req, uintptr(unsafe.Pointer(v))); e != 0 {
		p.err.Set(accessError(MethodPPDev, p.path, name, e))
		return false
	}
	return true
}

func (p *ppdevPort) read(req uintptr, name string) uint8 {
	var v uint8
	if !p.ioctl(req, name, &v) {
		return 0xff
	}
	return v
}

func (p *ppdevPort) WriteData(v uint8)    { p.ioctl(PPWDATA, "PPWDATA", &v) }
func (p *ppdevPort) ReadData() uint8      { return p.read(PPRDATA, "PPRDATA") }
func (p *ppdevPort) ReadStatus() uint8    { return p.read(PPRSTATUS, "PPRSTATUS") }
func (p *ppdevPort) WriteControl(v uint8) { p.ioctl(PPWCONTROL, "PPWCONTROL", &v) }
func (p *ppdevPort) ReadControl() uint8   { return p.read(PPRCONTROL, "PPRCONTROL") }
func (p *ppdevPort) Err() error           { return p.err.Err() }

// Close releases the claim (PPRELEASE) and closes the device.
func (p *ppdevPort) Close() error {
	if p.fd < 0 {
		return nil
	}
	var err error
	if p.claimed {
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(p.fd), PPRELEASE, 0); e != 0 {
			err = accessError(MethodPPDev, p.path, "PPRELEASE", e)
		}
	}
	if e := unix.Close(p.fd); e != nil && err == nil {
		err = accessError(MethodPPDev, p.path, "close", e)
	}
	p.fd = -1
	return err
}
