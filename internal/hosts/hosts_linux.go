// Package hosts makes a small cluster of emulated hosts on one Linux
// machine, for tests that must see what separate computers see: each host
// is a network, UTS and mount namespace of its own — its own hostname, its
// own /dev/shm and /etc/hosts, one Ethernet interface eth0 with an address
// on a private LAN — and the hosts' interfaces are veths on one bridge,
// which lives in a namespace of its own. Nothing is added to the machine's
// own network: the addresses exist only inside the namespaces.
//
// Commands run in a host through nsenter(1), and MPI jobs span the hosts
// as on a cluster: Mpirun starts mpirun in host 0 with a hostfile naming
// them all and an rsh agent (--mca plm_rsh_agent) that starts mpirun's
// daemon in each host through nsenter, as ssh would on real computers.
//
// A host lives as long as a holder process the package starts (a shell
// waiting on a pipe). When the test ends every process left in a host is
// killed and the holders exit (they also do when the test process dies),
// and the kernel removes their namespaces, veths and bridge.
// It needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), nsenter and ip.
package hosts

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// LAN is the hosts' network; host k is LAN's address k+1.
var LAN = netip.MustParsePrefix("10.99.0.0/24")

// Host is one emulated host.
type Host struct {
	Name string     // its hostname: host0, host1, …
	Addr netip.Addr // its address on LAN, on eth0
	pid  int        // the holder, whose namespaces are the host's
}

// Cluster is the hosts and their LAN.
type Cluster struct {
	Hosts    []Host
	Hostfile string // an mpirun hostfile naming every host, slots each
	Agent    string // the rsh agent script for mpirun
	dir      string
	sw       int // the holder of the bridge's namespace
}

// New makes n hosts of slots MPI slots each and removes them when the
// test ends. It skips the test (fails it in CI) when this machine cannot
// make namespaces. Each host sees the machine's mounts as they are now,
// but for FUSE mounts other than boards (mount points the hosts' programs
// use: mount them before New).
func New(t testing.TB, n, slots int, boards ...string) *Cluster {
	t.Helper()
	for _, tool := range []string{"nsenter", "ip", "sh", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s not found (apt-get install util-linux iproute2)", tool)
		}
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "emulated hosts need root (network, UTS and mount namespaces)")
	}
	c := &Cluster{dir: t.TempDir()}
	hostsFile := filepath.Join(c.dir, "hosts")
	var hosts, hostfile strings.Builder
	hosts.WriteString("127.0.0.1 localhost\n")
	a := LAN.Addr()
	for k := range n {
		a = a.Next()
		h := Host{Name: "host" + strconv.Itoa(k), Addr: a}
		c.Hosts = append(c.Hosts, h)
		fmt.Fprintf(&hosts, "%s %s\n", h.Addr, h.Name)
		fmt.Fprintf(&hostfile, "%s slots=%d\n", h.Name, slots)
	}
	c.Hostfile = filepath.Join(c.dir, "hostfile")
	if err := os.WriteFile(hostsFile, []byte(hosts.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Hostfile, []byte(hostfile.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The bridge's namespace, then each host's.
	sw := hold(t, syscall.CLONE_NEWNET, "")
	c.sw = sw
	c.must(t, sw, "ip", "link", "add", "br0", "type", "bridge")
	c.must(t, sw, "ip", "link", "set", "br0", "up")
	for k := range c.Hosts {
		h := &c.Hosts[k]
		// Mounts made here must not reach the machine: private first.
		h.pid = hold(t, syscall.CLONE_NEWNET|syscall.CLONE_NEWUTS|syscall.CLONE_NEWNS,
			fmt.Sprintf("mount --make-rprivate / && %s && mount -t tmpfs tmpfs /dev/shm && mount --bind %s /etc/hosts && echo %s >/proc/sys/kernel/hostname", dropFUSE(boards), hostsFile, h.Name))
		port := "p" + strconv.Itoa(k)
		c.must(t, sw, "ip", "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(h.pid))
		c.must(t, sw, "ip", "link", "set", port, "master", "br0", "up")
		c.must(t, h.pid, "ip", "link", "set", "lo", "up")
		c.must(t, h.pid, "ip", "addr", "add", netip.PrefixFrom(h.Addr, LAN.Bits()).String(), "dev", "eth0")
		c.must(t, h.pid, "ip", "link", "set", "eth0", "up")
	}
	c.writeAgent(t)
	t.Cleanup(func() { // before the holders' (cleanups run last first)
		for _, h := range c.Hosts {
			killHost(h.pid)
		}
	})
	return c
}

// dropFUSE is a shell command that lazily unmounts, in a host's new mount
// namespace, every FUSE mount but boards. The namespace's copy of another
// program's FUSE mount (a papersctl hil or a test's board) would keep that
// file system alive after its owner unmounts it: the owner's server then
// waits, with every port file closed, until this host is gone (a hil run
// stayed 5 minutes after its machines had powered off).
func dropFUSE(boards []string) string {
	keep := ""
	for _, b := range boards {
		keep += fmt.Sprintf(" && $5 != %q", filepath.Clean(b))
	}
	return fmt.Sprintf(`for m in $(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i+1) ~ /^fuse/%s) print $5; break } }' /proc/self/mountinfo); do umount -l "$m" || exit 1; done`, keep)
}

// hold starts a holder process in new namespaces (flags), which runs setup
// and then waits until the test ends, and returns its pid.
func hold(t testing.TB, flags uintptr, setup string) int {
	t.Helper()
	script := "read _" // EOF on stdin: the test is over
	if setup != "" {
		script = setup + " && echo ready && read _"
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testenv.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("hosts: a namespace of its own: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	if setup != "" {
		ready := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(stdout).ReadString('\n')
			ready <- line
		}()
		select {
		case line := <-ready:
			if line != "ready\n" {
				t.Fatalf("hosts: setting up a host (%s): %s", setup, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("hosts: setting up a host (%s) took more than 10 s: %s", setup, stderr.String())
		}
	}
	return cmd.Process.Pid
}

// must runs a command in the namespaces of pid's host.
func (c *Cluster) must(t testing.TB, pid int, name string, args ...string) {
	t.Helper()
	if out, err := enter(context.Background(), pid, name, args...).CombinedOutput(); err != nil {
		t.Fatalf("hosts: %s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// enter is a command in the namespaces of pid's host. nsenter execs it in
// place (-F), so cancelling ctx kills it — and, since a daemon it started
// may hold on, every process of the host but its holder.
func enter(ctx context.Context, pid int, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"-t", strconv.Itoa(pid), "-n", "-u", "-m", "-F", "--", name}, args...)...)
	cmd.Cancel = func() error {
		killHost(pid)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// killHost kills every process in the network namespace of holder but
// holder.
func killHost(holder int) {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", holder))
	if err != nil {
		return
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == holder {
			continue
		}
		if other, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); err == nil && other == ns {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// Command runs name with args in host k (its network, hostname and
// mounts). Cancelling ctx ends it and everything else running in the
// host.
func (c *Cluster) Command(ctx context.Context, k int, name string, args ...string) *exec.Cmd {
	return enter(ctx, c.Hosts[k].pid, name, args...)
}

// writeAgent writes the rsh agent: mpirun runs "AGENT HOST COMMAND" to
// start its daemon on HOST, and the agent runs COMMAND in HOST's
// namespaces, with mpirun's environment, as ssh would on HOST.
func (c *Cluster) writeAgent(t testing.TB) {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# mpirun's rsh agent for the emulated hosts (package internal/hosts)\nhost=$1\nshift\ncase $host in\n")
	for _, h := range c.Hosts {
		fmt.Fprintf(&b, "%s|%s) pid=%d ;;\n", h.Name, h.Addr, h.pid)
	}
	b.WriteString("*) echo \"hosts agent: no host $host\" >&2; exit 255 ;;\nesac\nexec nsenter -t \"$pid\" -n -u -m -F -- /bin/sh -c \"$*\"\n")
	c.Agent = filepath.Join(c.dir, "agent")
	if err := os.WriteFile(c.Agent, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Mpirun returns mpirun, run in host 0, starting np ranks across the
// hosts (by slot: host0's first) with args (options, then the program).
func (c *Cluster) Mpirun(ctx context.Context, np int, args ...string) *exec.Cmd {
	a := []string{"--hostfile", c.Hostfile, "--mca", "plm_rsh_agent", c.Agent, "-np", strconv.Itoa(np)}
	if os.Geteuid() == 0 {
		a = append(a, "--allow-run-as-root")
	}
	return c.Command(ctx, 0, "mpirun", append(a, args...)...)
}

// SetLink takes host k's link to the LAN down or up, as a pulled or
// replaced cable would.
func (c *Cluster) SetLink(k int, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	out, err := enter(context.Background(), c.Hosts[k].pid, "ip", "link", "set", "eth0", state).CombinedOutput()
	if err != nil {
		return fmt.Errorf("hosts: %s eth0 %s: %v: %s", c.Hosts[k].Name, state, err, out)
	}
	return nil
}
