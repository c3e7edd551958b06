package tcpnet

import (
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
