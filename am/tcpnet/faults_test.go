//go:build linux

package tcpnet_test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/am"
	"github.com/ttlpapers/ttlpapers/am/tcpnet"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
	"github.com/ttlpapers/ttlpapers/papers"
)

// envPeer makes the test binary PE 1 of a 2-PE network (peer): it prints
// its address, reads the secret and PE 0's, connects, and answers
// requests until it is killed.
const envPeer = "TCPNET_TEST_PEER"

func TestMain(m *testing.M) {
	if os.Getenv(envPeer) != "" {
		if err := peer(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func peer() error {
	l, err := tcpnet.Listen(os.Getenv(envPeer))
	if err != nil {
		return err
	}
	fmt.Println(l.Addr())
	var secret, addr string
	if _, err := fmt.Scan(&secret, &addr); err != nil {
		return err
	}
	s, _ := hex.DecodeString(secret)
	t, err := l.Connect(1, []netip.AddrPort{netip.MustParseAddrPort(addr), l.Addr()}, s, 10*time.Second, true)
	if err != nil {
		return err
	}
	ep := am.NewEndpoint(t, am.Options{Timeout: time.Hour})
	ep.Register(func(m *am.Msg) { m.Reply(1, m.Args) })
	ep.Register(func(*am.Msg) {})
	err = ep.Wait("serve", 0, func() bool { return false })
	if g := (*am.GoneError)(nil); errors.As(err, &g) {
		return nil // the test is over
	}
	return err
}

// startPeer starts PE 1 in a process of its own and returns PE 0's
// endpoint, with timeout, once a round trip has worked.
func startPeer(t *testing.T, timeout time.Duration) (*am.Endpoint, *exec.Cmd, *int) {
	return startPeerOn(t, timeout, "127.0.0.1", "127.0.0.1")
}

// startPeerOn is startPeer with PE 0 listening on addr0 and PE 1 on addr1,
// and PE 1's command prefixed by prefix (ip netns exec NAME).
func startPeerOn(t *testing.T, timeout time.Duration, addr0, addr1 string, prefix ...string) (*am.Endpoint, *exec.Cmd, *int) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(append(prefix, self)[0], append(prefix, self)[1:]...)
	cmd.Env = append(os.Environ(), envPeer+"="+addr1)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var addr string
	if _, err := fmt.Fscan(bufio.NewReader(out), &addr); err != nil {
		t.Fatal(err)
	}
	l, err := tcpnet.Listen(addr0)
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, tcpnet.SecretLen)
	rand.Read(secret)
	fmt.Fprintln(in, hex.EncodeToString(secret), l.Addr())
	net, err := l.Connect(0, []netip.AddrPort{l.Addr(), netip.MustParseAddrPort(addr)}, secret, 10*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { net.Close() })
	ep := am.NewEndpoint(net, am.Options{Timeout: timeout})
	replies := new(int)
	ep.Register(func(*am.Msg) {})
	ep.Register(func(*am.Msg) { *replies++ })
	if err := roundTrip(ep, replies); err != nil {
		t.Fatal(err)
	}
	return ep, cmd, replies
}

func roundTrip(ep *am.Endpoint, replies *int) error {
	want := *replies + 1
	if err := ep.Request(1, 0, am.Args{7}); err != nil {
		return err
	}
	return ep.Wait("round trip", 1, func() bool { return *replies == want })
}

// TestPeerKilled: a wait on a PE whose process is killed ends at once in
// a *am.GoneError naming it.
func TestPeerKilled(t *testing.T) {
	const timeout = 5 * time.Second
	ep, cmd, replies := startPeer(t, timeout)
	cmd.Process.Kill()
	cmd.Wait()
	start := time.Now()
	err := roundTrip(ep, replies)
	var g *am.GoneError
	if !errors.As(err, &g) || g.PE != 1 {
		t.Fatalf("a round trip to a killed PE: %v, want a *am.GoneError naming PE 1", err)
	}
	if d := time.Since(start); d > timeout/2 {
		t.Errorf("the killed PE was named after %v (timeout %v)", d, timeout)
	}
	t.Log(err)
}

// TestPeerStopped: a wait on a PE whose process is stopped ends in a
// *papers.TimeoutError naming it once the timeout has passed.
func TestPeerStopped(t *testing.T) {
	const timeout = time.Second
	ep, cmd, replies := startPeer(t, timeout)
	cmd.Process.Signal(syscall.SIGSTOP)
	defer cmd.Process.Signal(syscall.SIGCONT)
	// The signal stops the process's threads as each next enters the
	// kernel: wait for the state to say so.
	for i := 0; ; i++ {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "T" {
			break
		}
		if i == 1000 {
			t.Fatal("PE 1's process did not stop")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	err := roundTrip(ep, replies)
	var te *papers.TimeoutError
	if !errors.As(err, &te) || te.Missing != 1<<1 {
		t.Fatalf("a round trip to a stopped PE: %v, want a *papers.TimeoutError naming PE 1", err)
	}
	if d := time.Since(start); d < timeout || d > 3*timeout {
		t.Errorf("the stopped PE was named after %v (timeout %v)", d, timeout)
	}
	// Continued within the timeout of the next wait, it answers: the stop
	// only delayed it.
	cmd.Process.Signal(syscall.SIGCONT)
	if err := ep.Wait("late reply", 1, func() bool { return *replies >= 2 }); err != nil {
		t.Errorf("after SIGCONT: %v", err)
	}
	t.Log(err)
}

// TestLinkDown: PE 1 in a network namespace of its own, behind a veth.
// With the link down for a quarter of the timeout a round trip is only
// delayed (TCP retransmits); down for longer, the wait ends in a
// *papers.TimeoutError naming PE 1.
func TestLinkDown(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		testenv.Missing(t, "ip (iproute2) not found: %v", err)
	}
	id := os.Getpid() % 100000
	ns, veth, peerEnd := fmt.Sprintf("h31tcp%d", id), fmt.Sprintf("h31a%d", id), fmt.Sprintf("h31b%d", id)
	sub := fmt.Sprintf("10.%d.%d", 100+id%100, id/100%250)
	ipc := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		testenv.Missing(t, "cannot make a network namespace (the test needs CAP_SYS_ADMIN and CAP_NET_ADMIN): %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ipc("link", "add", veth, "type", "veth", "peer", "name", peerEnd)
	t.Cleanup(func() { exec.Command("ip", "link", "del", veth).Run() })
	ipc("link", "set", peerEnd, "netns", ns)
	ipc("addr", "add", sub+".1/24", "dev", veth)
	ipc("link", "set", veth, "up")
	ipc("-n", ns, "addr", "add", sub+".2/24", "dev", peerEnd)
	ipc("-n", ns, "link", "set", peerEnd, "up")
	ipc("-n", ns, "link", "set", "lo", "up")

	const timeout = 4 * time.Second
	ep, _, replies := startPeerOn(t, timeout, sub+".1", sub+".2", "ip", "netns", "exec", ns)
	ipc("link", "set", veth, "down")
	time.AfterFunc(time.Second, func() { exec.Command("ip", "link", "set", veth, "up").Run() })
	start := time.Now()
	if err := roundTrip(ep, replies); err != nil {
		t.Fatalf("a round trip across a link down for 1s: %v", err)
	}
	t.Logf("a round trip across a link down for 1s took %v", time.Since(start).Round(time.Millisecond))
	time.Sleep(100 * time.Millisecond)
	ipc("link", "set", veth, "down")
	start = time.Now()
	err := roundTrip(ep, replies)
	var te *papers.TimeoutError
	if !errors.As(err, &te) || te.Missing != 1<<1 {
		t.Fatalf("a round trip across a link down for good: %v, want a *papers.TimeoutError naming PE 1", err)
	}
	if d := time.Since(start); d > 2*timeout {
		t.Errorf("named after %v (timeout %v)", d, timeout)
	}
	t.Log(err)
}
