// Package backend opens any kind of printer port from one string, the
// spec, and probes which ports and access methods work on this machine.
// Every way of naming a port — a command's flag, a program's environment —
// takes a spec:
//
//	port:0x378              direct I/O (ioperm, root or CAP_SYS_RAWIO)
//	ppdev:/dev/parport0     the kernel's ppdev driver (the lp group)
//	devport:0x378           /dev/port (root), a fallback
//	gpio:D0=GPIO17,...      periph.io GPIO pins (see gpiomap.ParseMapping)
//
// Two short forms, the ones people type, stand for the first two: a base
// address alone ("0x378", "378", "lpt1") is port:, a device path alone
// ("/dev/parport0") is ppdev:. Canonical writes any spec in full.
package backend

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"periph.io/x/host/v3"

	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/gpiomap"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
	"github.com/ttlpapers/ttlpapers/lpt/periphlpt"
)

// Kinds of spec, the part before the colon.
const (
	KindDirect  = "port"
	KindPPDev   = "ppdev"
	KindDevPort = "devport"
	KindGPIO    = "gpio"
)

// Open opens the port a spec names (see the package comment).
func Open(spec string) (lpt.Port, error) {
	spec, err := Canonical(spec)
	if err != nil {
		return nil, err
	}
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case KindDirect, KindDevPort:
		base, _ := ParseBase(arg)
		if kind == KindDirect {
			return linuxlpt.OpenDirect(base)
		}
		return linuxlpt.OpenDevPort(base)
	case KindPPDev:
		return linuxlpt.OpenPPDev(arg)
	default: // KindGPIO (Check refused any other kind)
		if err := hostInit(); err != nil {
			return nil, err
		}
		return periphlpt.Open(arg)
	}
}

// Check reports (a *SpecError) whether Open accepts spec's form — a known kind, a valid
// base address, a complete GPIO mapping — without opening or touching
// anything, so that a command can refuse a mistyped port before it starts.
func Check(spec string) error {
	_, err := Canonical(spec)
	return err
}

// SpecError reports a spec that names no port: its form is wrong, so
// nothing was opened or touched. Check, Canonical and Open return it.
type SpecError struct {
	Spec string
	Err  error // what is wrong, and what to write instead
}

func (e *SpecError) Error() string { return e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// Canonical checks spec as Check does and writes it in full: a short form
// gains its kind ("0x378" is "port:0x378", "/dev/parport0" is
// "ppdev:/dev/parport0"); a full spec is returned as it is.
func Canonical(spec string) (string, error) {
	s, err := canonical(spec)
	if err != nil {
		return "", &SpecError{Spec: spec, Err: err}
	}
	return s, nil
}

func canonical(spec string) (string, error) {
	kind, arg, ok := strings.Cut(spec, ":")
	switch {
	case !ok && strings.HasPrefix(spec, "/"):
		return KindPPDev + ":" + spec, nil
	case !ok:
		if _, err := ParseBase(spec); err != nil {
			return "", fmt.Errorf("%w, a ppdev device such as /dev/parport0, or a spec such as devport:0x378 or gpio:<mapping>", err)
		}
		return KindDirect + ":" + spec, nil
	case arg == "":
		return "", fmt.Errorf("backend: port %q: want port:0x378, ppdev:/dev/parport0, devport:0x378 or gpio:<mapping>", spec)
	}
	var err error
	switch kind {
	case KindDirect, KindDevPort:
		_, err = ParseBase(arg)
	case KindPPDev:
	case KindGPIO:
		_, err = gpiomap.ParseMapping(arg)
	default:
		err = fmt.Errorf("backend: unknown port kind %q in %q: use port, ppdev, devport or gpio", kind, spec)
	}
	if err != nil {
		return "", err
	}
	return spec, nil
}

// ParseBase parses a port base address: "0x378", "378" (hex, as ports are
// always written) or "lpt1".."lpt3".
func ParseBase(s string) (uint16, error) {
	switch strings.ToLower(s) {
	case "lpt1":
		return lpt.BaseLPT1, nil
	case "lpt2":
		return lpt.BaseLPT2, nil
	case "lpt3":
		return lpt.BaseLPT3, nil
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(s), "0x"), 16, 16)
	if err != nil || v > 0xfffd {
		return 0, fmt.Errorf("backend: port base %q: want a hexadecimal I/O address such as 0x378 (or lpt1, lpt2, lpt3)", s)
	}
	return uint16(v), nil
}

var hostInit = sync.OnceValue(func() error {
	if _, err := host.Init(); err != nil {
		return fmt.Errorf("backend: periph host.Init: %w", err)
	}
	return nil
})

// Found is a port the system knows of, as one source lists it.
type Found = linuxlpt.Found

// Attempt is one access method tried on one port.
type Attempt struct {
	Spec string // what Open accepts: "port:0x378"
	Err  error  // nil when the method works
}

// Report is what Probe found.
type Report struct {
	Found    []Found
	Attempts []Attempt
	GPIO     string // the GPIO pins periph offers, or why none
}

// Probe lists the ports the system knows of and tries every access method
// on each (and on the usual addresses when none are listed), opening and
// closing each one. Opening a port writes two test patterns to its data
// register and restores it.
func Probe() Report {
	r := Report{Found: linuxlpt.FindPorts()}
	var bases []uint16
	var devs []string
	for _, sp := range linuxlpt.SystemPorts(r.Found) {
		if sp.Base != 0 && !slices.Contains(bases, sp.Base) {
			bases = append(bases, sp.Base)
		}
		if sp.Dev != "" && !slices.Contains(devs, sp.Dev) {
			devs = append(devs, sp.Dev)
		}
	}
	if len(bases) == 0 {
		bases = []uint16{lpt.BaseLPT1, lpt.BaseLPT2, lpt.BaseLPT3}
	}
	if len(devs) == 0 {
		devs = []string{"/dev/parport0"}
	}
	try := func(spec string) {
		p, err := Open(spec)
		if err == nil {
			err = p.Close()
		}
		r.Attempts = append(r.Attempts, Attempt{Spec: spec, Err: err})
	}
	for _, d := range devs {
		try(KindPPDev + ":" + d)
	}
	for _, b := range bases {
		try(fmt.Sprintf("%s:%#x", KindDirect, b))
		try(fmt.Sprintf("%s:%#x", KindDevPort, b))
	}
	r.GPIO = gpioSummary()
	return r
}
