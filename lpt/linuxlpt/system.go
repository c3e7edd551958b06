package linuxlpt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ttlpapers/ttlpapers/lpt"
)

// Found is a parallel port the system knows of, as one source lists it.
type Found struct {
	Name   string // the kernel's name: "parport0"
	Where  string // an I/O range from /proc/ioports ("0378-037a") or a ppdev node ("/dev/parport0")
	Source string // where it was seen: "/proc/ioports", "/dev", "/sys/class/ppdev"
}

// SystemPort is one parallel port the system knows of, with what every
// source says about it.
type SystemPort struct {
	Name string // the kernel's name: "parport0"
	Base uint16 // base address of its SPP registers (its first I/O range); 0 when none is listed
	Dev  string // its ppdev node, "/dev/parport0"; "" when it has none
}

// Number is the port's number in the kernel's order (parport0 is 0), or
// -1 when its name has none.
func (sp SystemPort) Number() int {
	n, err := strconv.Atoi(strings.TrimPrefix(sp.Name, "parport"))
	if err != nil || n < 0 || !strings.HasPrefix(sp.Name, "parport") {
		return -1
	}
	return n
}

// Open opens the port: through ppdev when it has a node (the way for
// ordinary users), else by direct I/O at its base address.
func (sp SystemPort) Open() (lpt.Port, error) {
	var errs []error
	if sp.Dev != "" {
		p, err := OpenPPDev(sp.Dev)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	if sp.Base != 0 {
		p, err := OpenDirect(sp.Base)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	if errs == nil {
		return nil, fmt.Errorf("lpt: %s has neither a ppdev node nor an I/O range: load ppdev (sudo modprobe ppdev)", sp.Name)
	}
	return nil, errors.Join(errs...)
}

// SystemPorts merges what the sources say (FindPorts) into one entry per
// port, in the order the ports were first listed. It opens nothing.
func SystemPorts(found []Found) []SystemPort {
	var ports []SystemPort
	index := map[string]int{}
	for _, f := range found {
		i, ok := index[f.Name]
		if !ok {
			i = len(ports)
			index[f.Name] = i
			ports = append(ports, SystemPort{Name: f.Name})
		}
		sp := &ports[i]
		if strings.HasPrefix(f.Where, "/dev/") {
			if sp.Dev == "" {
				sp.Dev = f.Where
			}
		} else if base, ok := rangeBase(f.Where); ok && sp.Base == 0 {
			sp.Base = base // a port's first I/O range holds its SPP registers; a second is its ECP/EPP range
		}
	}
	return ports
}

// rangeBase reads the base of an I/O range as /proc/ioports writes it:
// "0378-037a".
func rangeBase(where string) (uint16, bool) {
	lo, _, ok := strings.Cut(where, "-")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(lo, 16, 16)
	return uint16(v), err == nil && v != 0
}
