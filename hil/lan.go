package hil

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"time"
)

// The machines' LAN (Config.Program): every machine has an e1000 network
// card whose frames QEMU sends as datagrams to a hub here (a dgram netdev
// on Unix sockets: Debian's QEMU has no vde), which repeats each frame to
// every other machine, as an Ethernet hub does. Machine k is LANAddr(k) on
// LANPrefix.
var LANPrefix = netip.MustParsePrefix("10.31.0.0/24")

// LANAddr is machine k's address on the LAN: .1 for PE 0.
func LANAddr(k int) netip.Prefix {
	a := LANPrefix.Addr().As4()
	a[3] = byte(k + 1)
	return netip.PrefixFrom(netip.AddrFrom4(a), LANPrefix.Bits())
}

// lanModule is the guest kernel module of the machines' network card.
const lanModule = "e1000"

// hub repeats frames between the machines' network cards.
type hub struct {
	conn  *net.UnixConn
	dir   string
	peers []*net.UnixAddr
	done  chan struct{}
}

// startHub listens in dir for n machines' frames.
func startHub(dir string, n int) (*hub, error) {
	h := &hub{dir: dir, done: make(chan struct{})}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "hub.sock"), Net: "unixgram"})
	if err != nil {
		return nil, fmt.Errorf("hil: the machines' LAN: %w", err)
	}
	h.conn = conn
	for k := range n {
		h.peers = append(h.peers, &net.UnixAddr{Name: h.socket(k), Net: "unixgram"})
	}
	go h.run()
	return h, nil
}

// socket is machine k's end of the LAN.
func (h *hub) socket(k int) string { return filepath.Join(h.dir, fmt.Sprintf("pe%d.sock", k)) }

// qemuArgs are machine k's network card and its link to the hub; the card
// has no boot ROM (romfile=), which would only slow the boot.
func (h *hub) qemuArgs(k int) []string {
	return []string{
		"-netdev", fmt.Sprintf("dgram,id=lan,local.type=unix,local.path=%s,remote.type=unix,remote.path=%s", h.socket(k), h.conn.LocalAddr()),
		"-device", fmt.Sprintf("e1000,netdev=lan,mac=52:54:00:31:00:%02x,romfile=", k),
	}
}

func (h *hub) run() {
	defer close(h.done)
	buf := make([]byte, 1<<16)
	for {
		n, from, err := h.conn.ReadFromUnix(buf)
		if err != nil {
			return // closed
		}
		for _, p := range h.peers {
			if from != nil && p.Name == from.Name {
				continue
			}
			// A machine not up yet, or not reading, loses the frame, as
			// on a real hub; its TCP sends it again.
			h.conn.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
			h.conn.WriteToUnix(buf[:n], p)
		}
	}
}

func (h *hub) close() {
	h.conn.Close()
	<-h.done
}
