//go:build linux

package hosts_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/emu"
	"github.com/ttlpapers/ttlpapers/emu/ppdevfs"
	"github.com/ttlpapers/ttlpapers/internal/hosts"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// The test binary is also the hosts' network program: with envListen it
// answers one TCP connection on the address given, with envDial it
// connects to one and prints the answer.
const (
	envListen = "HOSTS_TEST_LISTEN"
	envDial   = "HOSTS_TEST_DIAL"
)

func TestMain(m *testing.M) {
	if a := os.Getenv(envListen); a != "" {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("listening")
		c, err := ln.Accept()
		if err == nil {
			name, _ := os.Hostname()
			fmt.Fprintf(c, "hello from %s\n", name)
			c.Close()
		}
		os.Exit(0)
	}
	if a := os.Getenv(envDial); a != "" {
		for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err == nil {
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Print(line)
				os.Exit(0)
			}
			if time.Now().After(deadline) {
				fmt.Println(err)
				os.Exit(1)
			}
		}
	}
	os.Exit(m.Run())
}

// TestCluster: each host has its own name and address, and reaches the
// other by name over the LAN, until its link is down.
func TestCluster(t *testing.T) {
	c := hosts.New(t, 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for k, h := range c.Hosts {
		out, err := c.Command(ctx, k, "hostname").Output()
		if err != nil || strings.TrimSpace(string(out)) != h.Name {
			t.Errorf("host %d: hostname %q, %v; want %s", k, out, err, h.Name)
		}
	}
	addr := net.JoinHostPort(c.Hosts[1].Addr.String(), "7099")
	ln := c.Command(ctx, 1, os.Args[0])
	ln.Env = append(os.Environ(), envListen+"="+addr)
	if err := ln.Start(); err != nil {
		t.Fatal(err)
	}
	defer ln.Wait()
	dial := func() (string, error) {
		cmd := c.Command(ctx, 0, os.Args[0])
		cmd.Env = append(os.Environ(), envDial+"="+net.JoinHostPort(c.Hosts[1].Name, "7099"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := c.SetLink(1, false); err != nil {
		t.Fatal(err)
	}
	if out, err := dial(); err == nil {
		t.Errorf("host0 reached host1 with host1's link down: %q", out)
	}
	if err := c.SetLink(1, true); err != nil {
		t.Fatal(err)
	}
	if out, err := dial(); err != nil || out != "hello from host1\n" {
		t.Errorf("host0 connecting to host1: %q, %v", out, err)
	}
}

// TestForeignFUSE: a host keeps the boards it is given and drops the
// machine's other FUSE mounts, so that their owner's unmount ends while the
// host lives (the host's copy would keep the file system, and the owner's
// server waiting, until the host is gone).
func TestForeignFUSE(t *testing.T) {
	testenv.FUSE(t)
	mount := func() (string, *ppdevfs.Server) {
		dir := t.TempDir()
		bd, err := emu.New(2)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := ppdevfs.Mount(dir, bd, ppdevfs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Unmount() })
		return dir, srv
	}
	board, _ := mount()
	other, otherSrv := mount()
	c := hosts.New(t, 1, 1, board)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := c.Command(ctx, 0, "ls", board).CombinedOutput(); err != nil || !strings.Contains(string(out), ppdevfs.FileName(0)) {
		t.Errorf("the host does not see its board %s: %v: %s", board, err, out)
	}
	out, err := c.Command(ctx, 0, "cat", "/proc/self/mountinfo").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), other) {
		t.Errorf("the host still has the machine's other FUSE mount %s", other)
	}
	unmounted := make(chan error, 1)
	go func() { unmounted <- otherSrv.Unmount() }()
	select {
	case err := <-unmounted:
		if err != nil {
			t.Error(err)
		}
	case <-ctx.Done():
		t.Fatalf("unmounting %s did not end while the host lived", other)
	}
}
