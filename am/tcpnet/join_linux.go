package tcpnet

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/ttlpapers/ttlpapers/papers"
)

// addrLen is an address as it crosses the board: 16 bytes of IPv6 (IPv4
// mapped), a 16-bit port, and the PE's Mode.
const addrLen = 19

// Join makes PE p's side of the TCP data network, exchanging over the
// board itself — a channel only the run's PEs share — what the PEs need
// to find and trust each other: PE 0 broadcasts a fresh secret, then
// whether every PE runs on one host (all connect through loopback then),
// then each PE broadcasts the address it listens on, with its Mode (all
// must agree, else each PE names those that differ). Every PE of the
// board must call it, right after papers.Open; timeout bounds the
// connecting, and each later wait. The board agrees at the end whether
// every PE connected, so that all fail together.
func (l *Listener) Join(p *papers.PE, timeout time.Duration) (*Net, error) {
	self := p.Self()
	secret := make([]byte, SecretLen)
	if self == 0 {
		rand.Read(secret)
	}
	if err := p.BroadcastBytes(0, secret); err != nil {
		l.Close()
		return nil, fmt.Errorf("tcpnet: PE %d: the secret over the board: %w", self, err)
	}
	host := hostID()
	first := make([]byte, len(host))
	copy(first, host)
	if err := p.BroadcastBytes(0, first); err != nil {
		l.Close()
		return nil, err
	}
	sameHost, err := p.All(string(first) == string(host))
	if err != nil {
		l.Close()
		return nil, err
	}
	mine := l.addr
	if sameHost {
		mine = l.loopback()
	}
	addrs, err := l.exchangeAddrs(p, mine)
	if err != nil {
		l.Close()
		return nil, err
	}
	t, err := l.Connect(self, addrs, secret, timeout, sameHost)
	all, berr := p.All(err == nil)
	switch {
	case err != nil:
		return nil, err
	case berr != nil:
		t.Close()
		return nil, berr
	case !all:
		t.Close()
		return nil, fmt.Errorf("tcpnet: PE %d: another PE could not connect to the data network (its error says why)", self)
	}
	return t, nil
}

// exchangeAddrs is Join's round of addresses: each PE in turn broadcasts
// over the board the address it listens on (mine for this PE) and its
// Mode. It returns every PE's address, or an error naming each PE whose
// mode is not PE 0's.
func (l *Listener) exchangeAddrs(p *papers.PE, mine netip.AddrPort) ([]netip.AddrPort, error) {
	self, n := p.Self(), p.PEs()
	addrs := make([]netip.AddrPort, n)
	var differ []string // the PEs whose mode is not PE 0's, with theirs
	var mode0 Mode
	for k := range n {
		var b [addrLen]byte
		if k == self {
			a := mine.Addr().As16()
			copy(b[:], a[:])
			binary.BigEndian.PutUint16(b[16:], mine.Port())
			b[18] = byte(l.Mode)
		}
		if err := p.BroadcastBytes(k, b[:]); err != nil {
			return nil, fmt.Errorf("tcpnet: PE %d: PE %d's address over the board: %w", self, k, err)
		}
		addrs[k] = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[:16])).Unmap(), binary.BigEndian.Uint16(b[16:]))
		if k == 0 {
			mode0 = Mode(b[18])
		} else if Mode(b[18]) != mode0 {
			differ = append(differ, fmt.Sprintf("PE %d has %s", k, Mode(b[18])))
		}
	}
	if len(differ) > 0 {
		return nil, fmt.Errorf("tcpnet: PE %d: %w: %s=%s on PE 0, but %s: set the same %s on every PC", self, ErrModes, EnvLAN, mode0, strings.Join(differ, ", "), EnvLAN)
	}
	return addrs, nil
}

// hostID tells this host's network apart from others': the kernel's boot
// id and this process's network namespace (PEs in namespaces of their own
// are on different hosts as far as the network goes).
func hostID() []byte {
	h := sha256.New()
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	h.Write(b)
	ns, _ := os.Readlink("/proc/self/ns/net")
	h.Write([]byte(ns))
	name, _ := os.Hostname()
	h.Write([]byte(name))
	return h.Sum(nil)[:8]
}
