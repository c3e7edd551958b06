package linuxlpt

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// ErrNoPort is wrapped by open errors when nothing that behaves like a
// parallel port answers: the data register does not read back what was
// written.
var ErrNoPort = errors.New("no parallel port answers there")

// ErrClosed is the sticky error of a real port used after Close.
var ErrClosed = errors.New("lpt: port used after Close")

// AccessError is a failure to open or use a real port, with what to do
// about it.
type AccessError struct {
	Method string // "ioperm", "ppdev" or "/dev/port"
	Port   string // "0x378", "/dev/parport0"
	Op     string // the step that failed: "ioperm", "open", "PPCLAIM", "probe", ...
	Err    error  // the cause: a unix.Errno, or an error wrapping ErrNoPort
	Fix    string // what the user can do; empty when there is no advice
}

func (e *AccessError) Error() string {
	s := fmt.Sprintf("lpt: %s %s: %s: %v", e.Method, e.Port, e.Op, e.Err)
	if e.Fix != "" {
		s += " — " + e.Fix
	}
	return s
}

func (e *AccessError) Unwrap() error { return e.Err }

// Method names used in AccessError.
const (
	MethodDirect  = "ioperm"
	MethodPPDev   = "ppdev"
	MethodDevPort = "/dev/port"
)

// accessError builds an AccessError whose Fix explains err for the method.
func accessError(method, port, op string, err error) *AccessError {
	return &AccessError{Method: method, Port: port, Op: op, Err: err, Fix: advice(method, port, op, err)}
}

// advice says what to do about err, the failure of step op of method on
// port.
func advice(method, port, op string, err error) string {
	if errors.Is(err, ErrNoPort) {
		return "check the address (the kernel lists its ports in /proc/ioports, as parport0, ...), " +
			"that the port is enabled in the BIOS/firmware setup, and that its mode is SPP/\"Normal\" rather than EPP/ECP/bidirectional"
	}
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return ""
	}
	switch errno {
	case unix.EPERM, unix.EACCES:
		if mode := LockdownMode(); mode != "" && method != MethodPPDev {
			return fmt.Sprintf("the kernel is in lockdown mode [%s], which forbids raw port I/O even to root; use ppdev (ppdev:/dev/parport0) instead", mode)
		}
		if method == MethodPPDev {
			return fmt.Sprintf("no permission to open %s: add your user to the device's group (usually lp: sudo usermod -aG lp $USER, then log in again), or run as root", port)
		}
		return fmt.Sprintf("raw port I/O needs root or CAP_SYS_RAWIO (sudo setcap cap_sys_rawio+ep %s); "+
			"as an ordinary user in the lp group, use ppdev (ppdev:/dev/parport0) instead", os.Args[0])
	case unix.ENOSYS:
		return "this kernel has no ioperm (built without CONFIG_X86_IOPL_IOPERM, or not an x86 kernel); use ppdev (ppdev:/dev/parport0) or /dev/port (devport:0x378)"
	case unix.ENOTSUP:
		return "ioperm cannot be applied to every thread of a program linked with cgo: build with CGO_ENABLED=0"
	case unix.EINVAL:
		if method == MethodDirect || method == MethodDevPort {
			return "the base address must leave room for its three registers (at most 0xfffd)"
		}
	case unix.ENOENT:
		if method == MethodDevPort {
			return "this kernel has no /dev/port (CONFIG_DEVPORT is off, or devtmpfs is not mounted); use ioperm or ppdev"
		}
		return fmt.Sprintf("%s does not exist: load the drivers (sudo modprobe parport_pc ppdev) and check that the port exists (ls /dev/parport*)", port)
	case unix.EISDIR:
		return fmt.Sprintf("%s is a directory: name the port's device in it, such as %s/parport0", port, strings.TrimSuffix(port, "/"))
	case unix.ENOTTY:
		if method == MethodPPDev {
			return fmt.Sprintf("%s is not a parallel port: it answers no ppdev requests (a regular file, /dev/null or another device); name a ppdev device such as /dev/parport0, or a file that papersctl emu serve --fuse serves", port)
		}
	case unix.ENXIO, unix.ENODEV:
		if op == "PPCLAIM" {
			// ppdev cannot register an exclusive device while another
			// driver has one on the port.
			return busyAdvice(method)
		}
		return fmt.Sprintf("no parallel port is behind %s: check that parport_pc found the port (dmesg | grep parport)", port)
	case unix.EBUSY:
		return busyAdvice(method)
	}
	return ""
}

// busyAdvice says who may hold a port that another has claimed: through
// ppdev, most often another program (a PE of an earlier run still
// running); through raw I/O, lp.
func busyAdvice(method string) string {
	if method == MethodPPDev {
		return "another program has the port open — a PE program of an earlier run still running (fuser -v on the device names it), or the printer driver lp (sudo rmmod lp, and blacklist it)"
	}
	return "another driver or program holds the port — usually lp, the printer driver: sudo rmmod lp (and blacklist it), or stop the program that has it open"
}

// LockdownMode returns the kernel's lockdown mode ("integrity" or
// "confidentiality") when lockdown is active, or "" when it is not or
// cannot be read. Lockdown forbids ioperm and /dev/port even to root.
func LockdownMode() string {
	b, err := os.ReadFile("/sys/kernel/security/lockdown")
	if err != nil {
		return ""
	}
	s := string(b)
	i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']')
	if i < 0 || j < i {
		return ""
	}
	if mode := s[i+1 : j]; mode != "none" {
		return mode
	}
	return ""
}

// probeData checks that a port answers: two patterns written to the data
// register must read back, and the register's old value is restored. The
// other PEs may be running on the board meanwhile, and it reads every
// port's strobes and data lines, a transparent port's too: the patterns
// differ in the LED lines only (a flicker), never in a line the board reads.
func probeData(p lpt.Port) error {
	old := p.ReadData()
	defer p.WriteData(old)
	const leds = lpt.LG | lpt.LR
	for _, v := range [...]uint8{old&^leds | lpt.LG, old&^leds | lpt.LR} {
		p.WriteData(v)
		if got := p.ReadData(); got != v {
			if c := p.ReadControl(); c != 0xff && c&lpt.ControlInput != 0 { // 0xff: nothing there at all
				return fmt.Errorf("%w: data register wrote %#02x, read back %#02x, and the control register (%#02x) has the input-direction bit set",
					ErrNoPort, v, got, c)
			}
			return fmt.Errorf("%w: data register wrote %#02x, read back %#02x", ErrNoPort, v, got)
		}
	}
	return p.Err()
}

func hexPort(base uint16) string { return fmt.Sprintf("%#x", base) }
