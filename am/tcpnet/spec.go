package tcpnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// EnvListen picks the address or network interface a PE listens on and
// advertises (Listen): PAPERS_LISTEN=192.168.1.10, =eth1, or =ADDR:PORT;
// none for no data network.
const EnvListen = "PAPERS_LISTEN"

// CheckListen reports what is wrong with a value of EnvListen, before
// anything listens.
func CheckListen(spec string) error {
	if spec == "" || spec == "none" {
		return nil
	}
	_, err := parseSpec(spec)
	return err
}

// parseSpec reads EnvListen: ADDR, ADDR:PORT or IFACE.
func parseSpec(spec string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(spec); err == nil {
		return ap, nil
	}
	if a, err := netip.ParseAddr(spec); err == nil {
		return netip.AddrPortFrom(a, 0), nil
	}
	ifc, err := net.InterfaceByName(spec)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("tcpnet: %s=%q is neither an address (192.168.1.10, [fe80::1%%eth0]:7000) nor a network interface of this host (%v): name the interface or address on the LAN the PCs share", EnvListen, spec, err)
	}
	addrs, _ := ifc.Addrs()
	var v6 netip.Addr
	for _, a := range addrs {
		if pn, ok := a.(*net.IPNet); ok {
			ip, _ := netip.AddrFromSlice(pn.IP)
			ip = ip.Unmap()
			if ip.Is4() {
				return netip.AddrPortFrom(ip, 0), nil
			}
			if !v6.IsValid() && !ip.IsLinkLocalUnicast() {
				v6 = ip
			}
		}
	}
	if v6.IsValid() {
		return netip.AddrPortFrom(v6, 0), nil
	}
	return netip.AddrPort{}, fmt.Errorf("tcpnet: %s=%q: the interface has no usable address (is it up?)", EnvListen, spec)
}

// EnvLAN says how the data network protects its frames on the LAN
// (ParseMode): PAPERS_LAN=authenticated, the default, or =private.
const EnvLAN = "PAPERS_LAN"

// Mode is how the frames on the LAN are protected. Every PE of a run must
// use the same one (Join checks).
type Mode uint8

const (
	// Authenticated: every frame carries a tag under a key of this run
	// and connection; one altered, injected, replayed, reordered or cut
	// short is refused and names its sender. The data travel in the
	// clear.
	Authenticated Mode = iota
	// Private: authenticated and encrypted, for a LAN others can read.
	Private
	// unprotected frames carry no tag: the benchmarks' baseline only,
	// which measures what the protection costs. ParseMode never gives it.
	unprotected
)

func (m Mode) String() string {
	switch m {
	case Authenticated:
		return "authenticated"
	case Private:
		return "private"
	case unprotected:
		return "unprotected"
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// ParseMode reads EnvLAN's value: "" is Authenticated.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "authenticated":
		return Authenticated, nil
	case "private":
		return Private, nil
	}
	return 0, fmt.Errorf("tcpnet: %s=%q: want authenticated (the default: every frame authenticated, the data in the clear) or private (encrypted too)", EnvLAN, s)
}

// ErrModes is in Join's error when the PEs' Modes differ (errors.Is).
var ErrModes = errors.New("the PEs protect the LAN differently")

// ErrForged is in the error of a wait on a PE whose frame failed
// authentication (errors.Is): altered, injected, replayed, reordered or
// cut short on the LAN. The frame is dropped, unhandled, and the link to
// the PE is treated as cut.
var ErrForged = errors.New("tcpnet: a frame failed authentication")
