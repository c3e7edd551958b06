package hil

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"sync"
)

// The machines' LAN (Config.Program): every machine has an e1000 network
// card whose frames QEMU sends over a stream socket (a stream netdev on a
// Unix socket: Debian's QEMU has no vde) to a hub here, which repeats each
// frame to every other machine, as an Ethernet hub does. A stream, unlike
// datagrams, never drops a frame when a busy machine reads slowly: the
// hub waits for it, as a switch's pause frames make a sender wait. Machine
// k is LANAddr(k) on LANPrefix.
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
	ln    *net.UnixListener
	mu    sync.Mutex
	ports []chan []byte // each connected machine's frames to send
	// receivers read the machines' frames, senders write them out.
	receivers, senders sync.WaitGroup
}

// startHub listens in dir for the machines' connections.
func startHub(dir string) (*hub, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "hub.sock"), Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("hil: the machines' LAN: %w", err)
	}
	h := &hub{ln: ln}
	h.receivers.Go(h.accept)
	return h, nil
}

// qemuArgs are machine k's network card and its link to the hub; the card
// has no boot ROM (romfile=), which would only slow the boot.
func (h *hub) qemuArgs(k int) []string {
	return []string{
		"-netdev", "stream,id=lan,server=off,addr.type=unix,addr.path=" + h.ln.Addr().String(),
		"-device", fmt.Sprintf("e1000,netdev=lan,mac=52:54:00:31:00:%02x,romfile=", k),
	}
}

func (h *hub) accept() {
	for {
		c, err := h.ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		out := make(chan []byte, 256)
		h.mu.Lock()
		h.ports = append(h.ports, out)
		h.mu.Unlock()
		h.senders.Go(func() { h.send(c, out) })
		h.receivers.Go(func() { h.receive(c, out) })
	}
}

// receive repeats each frame machine c sends (QEMU's stream format: a
// 4-byte big-endian length, then the frame) to every other port.
func (h *hub) receive(c *net.UnixConn, self chan []byte) {
	defer c.Close()
	var n [4]byte
	for {
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		frame := make([]byte, 4+binary.BigEndian.Uint32(n[:]))
		copy(frame, n[:])
		if _, err := io.ReadFull(c, frame[4:]); err != nil {
			return
		}
		h.mu.Lock()
		ports := h.ports
		h.mu.Unlock()
		for _, p := range ports {
			if p != self {
				p <- frame
			}
		}
	}
}

// send writes the frames for machine c until its connection ends, then
// drops what still comes.
func (h *hub) send(c *net.UnixConn, frames chan []byte) {
	for f := range frames {
		if _, err := c.Write(f); err != nil {
			break
		}
	}
	for range frames {
	}
}

// close stops the hub once the machines are gone (their connections
// ended, so every receiver returns).
func (h *hub) close() {
	h.ln.Close()
	h.receivers.Wait()
	for _, p := range h.ports {
		close(p)
	}
	h.senders.Wait()
}
