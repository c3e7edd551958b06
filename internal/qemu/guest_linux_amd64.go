package qemu

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The guest side: helpers for a static Go program running as a guest's
// /init (guests are amd64, the architecture BuildStatic targets).

const sysFinitModule = 313 // package syscall has no name for it

// Setup mounts devtmpfs on /dev, proc on /proc, sysfs on /sys and, when
// the kernel has it, securityfs on /sys/kernel/security (where the lockdown
// mode is). Run it first thing in /init.
func Setup() error {
	for _, m := range [...]struct{ src, dir, fstype string }{
		{"devtmpfs", "/dev", "devtmpfs"},
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
	} {
		if err := os.MkdirAll(m.dir, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil && err != unix.EBUSY {
			return fmt.Errorf("qemu: mount %s on %s: %w", m.fstype, m.dir, err)
		}
	}
	unix.Mount("securityfs", "/sys/kernel/security", "securityfs", 0, "") // absent on some kernels: best effort
	return nil
}

// LoadModule loads a kernel module file (Kernel.Module put it at
// /lib/modules/<name>) with finit_module, letting the kernel decompress
// .xz/.zst/.gz modules. Load dependencies first (parport before
// parport_pc and ppdev).
func LoadModule(path string, params string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	const compressed = 4 // MODULE_INIT_COMPRESSED_FILE
	flags := uintptr(0)
	if !strings.HasSuffix(path, ".ko") {
		flags = compressed
	}
	p, err := unix.BytePtrFromString(params)
	if err != nil {
		return err
	}
	if _, _, e := unix.Syscall(sysFinitModule, f.Fd(), uintptr(unsafe.Pointer(p)), flags); e != 0 && e != unix.EEXIST {
		return fmt.Errorf("qemu: finit_module %s: %w", path, e)
	}
	return nil
}

// Report prints a check's result line on the console (stdout).
func Report(name string, err error, detail string) {
	fmt.Println(FormatResult(name, err, detail))
}

// PowerOff syncs and powers the guest off, which ends QEMU. It does not
// return.
func PowerOff() {
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	select {} // /init must not exit: that panics the kernel
}

// UnloadModule removes a loaded module by name (delete_module, without
// waiting for users to go away).
func UnloadModule(name string) error {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return err
	}
	if _, _, e := unix.Syscall(unix.SYS_DELETE_MODULE, uintptr(unsafe.Pointer(p)), unix.O_NONBLOCK, 0); e != 0 {
		return fmt.Errorf("qemu: delete_module %s: %w", name, e)
	}
	return nil
}

// SetAddress gives the network interface name the IPv4 address and prefix
// of addr and brings it up, as `ip addr add ADDR dev NAME; ip link set NAME
// up` would: the guest has no ip command. It waits up to a second for the
// interface to appear (a driver module just loaded registers it).
func SetAddress(name string, addr netip.Prefix) error {
	if !addr.Addr().Is4() {
		return fmt.Errorf("qemu: %s: %v is not an IPv4 address", name, addr)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("qemu: socket: %w", err)
	}
	defer unix.Close(fd)
	for deadline := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/sys/class/net/" + name); err == nil {
			break
		} else if time.Now().After(deadline) {
			return fmt.Errorf("qemu: no network interface %s (is its driver loaded?)", name)
		}
	}
	mask := net.CIDRMask(addr.Bits(), 32)
	for _, set := range []struct {
		req uint
		ip  []byte
	}{{unix.SIOCSIFADDR, addr.Addr().AsSlice()}, {unix.SIOCSIFNETMASK, mask}} {
		ifr, err := unix.NewIfreq(name)
		if err == nil {
			err = ifr.SetInet4Addr(set.ip)
		}
		if err == nil {
			err = unix.IoctlIfreq(fd, set.req, ifr)
		}
		if err != nil {
			return fmt.Errorf("qemu: setting %v on %s: %w", addr, name, err)
		}
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		err = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr)
	}
	if err == nil {
		ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
		err = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
	}
	if err != nil {
		return fmt.Errorf("qemu: bringing %s up: %w", name, err)
	}
	return nil
}
