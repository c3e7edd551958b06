package hosts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Tamperer is a host on the path of one host's cable: a relay between that
// host's veth and the bridge that, while on, alters every TCP segment
// with a payload that comes from the host (its last byte inverted) and
// makes the segment's checksum right again, as a machine on the LAN could,
// so that only the frames' own authentication can find it. It relays
// every other frame unchanged, and everything while off.
type Tamperer struct {
	on       atomic.Bool
	tampered atomic.Int64
}

// Set turns the tampering on or off.
func (tp *Tamperer) Set(on bool) { tp.on.Store(on) }

// Tampered is how many segments it has altered.
func (tp *Tamperer) Tampered() int64 { return tp.tampered.Load() }

// Tamper puts a Tamperer, off, on host k's cable for the rest of the test:
// in the bridge's namespace, host k's veth leaves the bridge, and the
// relay copies frames between it and a new veth pair on the bridge.
func (c *Cluster) Tamper(t testing.TB, k int) *Tamperer {
	t.Helper()
	port, relay, bridged := "p"+strconv.Itoa(k), "u"+strconv.Itoa(k), "t"+strconv.Itoa(k)
	c.must(t, c.sw, "ip", "link", "set", port, "nomaster")
	c.must(t, c.sw, "ip", "link", "add", relay, "type", "veth", "peer", "name", bridged)
	c.must(t, c.sw, "ip", "link", "set", bridged, "master", "br0", "up")
	c.must(t, c.sw, "ip", "link", "set", relay, "up")
	var fds [2]int
	var err error
	nerr := inNetns(c.sw, func() {
		for i, name := range []string{port, relay} {
			if fds[i], err = packetSocket(name); err != nil {
				return
			}
		}
	})
	if err = errors.Join(nerr, err); err != nil {
		t.Fatalf("hosts: a relay on %s's cable: %v", c.Hosts[k].Name, err)
	}
	tp := &Tamperer{}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() { tp.relay(fds[0], fds[1], &stop, true) })
	wg.Go(func() { tp.relay(fds[1], fds[0], &stop, false) })
	t.Cleanup(func() {
		stop.Store(true)
		wg.Wait()
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return tp
}

// inNetns runs f on a thread in the network namespace of pid; the sockets
// f opens stay in it. The thread comes back to its own namespace after:
// a thread that ended would kill the holders it started (Pdeathsig
// follows the thread that forked).
func inNetns(pid int, f func()) error {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer own.Close()
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer ns.Close()
	if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	f()
	if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
		runtime.UnlockOSThread() // else the thread, in the wrong namespace, ends with this goroutine
	}
	return nil
}

// packetSocket opens a packet socket on interface name that reads the
// frames it receives (not those sent on it) with their virtio-net header,
// which keeps a large segment's offload state when the relay writes it
// again, and that gives up a read after 100 ms (so a relay can stop).
func packetSocket(name string) (int, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return -1, err
	}
	proto := int(htons(unix.ETH_P_ALL))
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, proto)
	if err != nil {
		return -1, err
	}
	err = errors.Join(
		unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1),
		unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1),
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100_000}),
		unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}))
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// relay copies frames from one packet socket to the other until stop,
// altering them when fromHost and the Tamperer is on.
func (tp *Tamperer) relay(from, to int, stop *atomic.Bool, fromHost bool) {
	buf := make([]byte, vnetLen+1<<16+64)
	for !stop.Load() {
		n, err := unix.Read(from, buf)
		if err != nil || n < vnetLen {
			continue // the read's timeout, to look at stop
		}
		if fromHost && tp.on.Load() && tamper(buf[:n]) {
			tp.tampered.Add(1)
		}
		unix.Write(to, buf[:n])
	}
}

// The headers a relayed frame starts with: virtio-net's, then Ethernet's.
const (
	vnetLen       = 10
	vnetNeedsCsum = 1 // flags: the checksum is to be completed downstream
	etherLen      = 14
)

// tamper inverts the last payload byte of an IPv4 TCP segment (frame:
// virtio-net header, Ethernet frame) and reports whether it did. Unless
// the checksum is left for downstream to complete, it computes it again.
func tamper(frame []byte) bool {
	eth := frame[vnetLen:]
	if len(eth) < etherLen+20 || binary.BigEndian.Uint16(eth[12:]) != unix.ETH_P_IP {
		return false
	}
	ip := eth[etherLen:]
	ihl := int(ip[0]&0xf) * 4
	if ip[9] != unix.IPPROTO_TCP || len(ip) < ihl+20 {
		return false
	}
	if tot := int(binary.BigEndian.Uint16(ip[2:])); tot >= ihl+20 && tot < len(ip) {
		ip = ip[:tot] // no Ethernet padding (a large offloaded segment's length is the frame's)
	}
	tcp := ip[ihl:]
	if thl := int(tcp[12]>>4) * 4; len(tcp) <= thl {
		return false // no payload
	}
	tcp[len(tcp)-1] ^= 0xff
	if frame[0]&vnetNeedsCsum == 0 {
		binary.BigEndian.PutUint16(tcp[16:], 0)
		binary.BigEndian.PutUint16(tcp[16:], tcpChecksum(ip[12:20], tcp))
	}
	return true
}

// tcpChecksum is the Internet checksum of a TCP segment over IPv4 (addrs:
// source and destination) with its checksum field zero.
func tcpChecksum(addrs, tcp []byte) uint16 {
	sum := uint32(unix.IPPROTO_TCP) + uint32(len(tcp))
	for _, b := range [][]byte{addrs, tcp} {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(b[i:]))
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
