package hosts

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestTamper: with a Tamperer on host 1's cable, what host 1 sends over
// TCP reaches host 0 intact while it is off, and altered but still
// delivered (the checksums right) while it is on; what host 0 sends is
// never altered.
func TestTamper(t *testing.T) {
	c := New(t, 2, 1)
	tp := c.Tamper(t, 1)
	var ln net.Listener
	var err error
	nerr := inNetns(c.Hosts[0].pid, func() { ln, err = net.Listen("tcp", c.Hosts[0].Addr.String()+":0") })
	if err = errors.Join(nerr, err); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var up net.Conn
	nerr = inNetns(c.Hosts[1].pid, func() { up, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second) })
	if err = errors.Join(nerr, err); err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	down, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	msg := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	// send writes msg on from and returns what to read.
	send := func(from, to net.Conn) []byte {
		t.Helper()
		go from.Write(msg)
		to.SetReadDeadline(time.Now().Add(10 * time.Second))
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(to, got); err != nil {
			t.Fatalf("read: %v (tampered %d segments)", err, tp.Tampered())
		}
		return got
	}
	if got := send(up, down); !bytes.Equal(got, msg) || tp.Tampered() != 0 {
		t.Fatalf("off: %d bytes differ, %d segments tampered", differ(got, msg), tp.Tampered())
	}
	tp.Set(true)
	if got := send(down, up); !bytes.Equal(got, msg) {
		t.Errorf("on, host 0 to host 1: %d bytes differ", differ(got, msg))
	}
	got := send(up, down)
	if d := differ(got, msg); d == 0 || int64(d) > tp.Tampered() {
		t.Errorf("on, host 1 to host 0: %d bytes differ, %d segments tampered; want at most one byte a segment (a retransmitted segment is tampered again), and some", d, tp.Tampered())
	}
	t.Logf("%d segments of %d bytes tampered", tp.Tampered(), len(msg))
	tp.Set(false)
	if got := send(up, down); !bytes.Equal(got, msg) {
		t.Errorf("off again: %d bytes differ", differ(got, msg))
	}
}

func differ(a, b []byte) int {
	n := 0
	for i := range a {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}
