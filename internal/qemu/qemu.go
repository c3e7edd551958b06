// Package qemu boots small Linux guests under QEMU so that tests can run Go
// code against a real kernel and real (emulated) hardware: the printer-port
// backends' ioperm, ppdev and /dev/port paths, which this project's own
// sandbox kernels do not offer.
//
// A test builds a static guest program (BuildStatic), packs it as /init
// into an initramfs with any kernel modules it needs (WriteInitramfs,
// Kernel.Module), boots Debian's kernel with it (Start or Run; TCG only,
// KVM is not used), and reads the guest's verdicts from the serial console
// (ParseResults). The guest side — mounting /dev, /proc and /sys, loading
// modules, printing results, powering off — is in guest_linux_amd64.go.
//
// The kernel comes from scripts/fetch-kernel.sh, which extracts Debian's
// current linux-image-*-amd64 package into $TTLPAPERS_KERNEL_DIR (default
// /var/cache/ttlpapers/kernel).
package qemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Binary is the QEMU system emulator the package runs.
const Binary = "qemu-system-x86_64"

// DefaultKernelDir is where scripts/fetch-kernel.sh puts the kernel when
// $TTLPAPERS_KERNEL_DIR is not set.
const DefaultKernelDir = "/var/cache/ttlpapers/kernel"

// ErrUnavailable is wrapped by the errors of FindQEMU and FindKernel, so a
// test can skip (only) when QEMU or the kernel is missing.
var ErrUnavailable = errors.New("not installed")

// FindQEMU returns the path of qemu-system-x86_64.
func FindQEMU() (string, error) {
	p, err := exec.LookPath(Binary)
	if err != nil {
		return "", fmt.Errorf("qemu: %s %w (apt-get install qemu-system-x86)", Binary, ErrUnavailable)
	}
	return p, nil
}

// Kernel is an extracted Debian kernel package.
type Kernel struct {
	Dir     string // the cache directory
	Vmlinuz string // the kernel image
	Release string // e.g. "6.1.0-56-amd64"
	Modules string // its lib/modules/<release> directory
}

// FindKernel finds the kernel that scripts/fetch-kernel.sh extracted into
// $TTLPAPERS_KERNEL_DIR or DefaultKernelDir.
func FindKernel() (*Kernel, error) {
	dir := os.Getenv("TTLPAPERS_KERNEL_DIR")
	if dir == "" {
		dir = DefaultKernelDir
	}
	missing := func(what string) error {
		return fmt.Errorf("qemu: %s %w in %s (run scripts/fetch-kernel.sh, or set TTLPAPERS_KERNEL_DIR)", what, ErrUnavailable, dir)
	}
	rel, err := os.ReadFile(filepath.Join(dir, "release"))
	if err != nil {
		return nil, missing("kernel")
	}
	k := &Kernel{Dir: dir, Release: strings.TrimSpace(string(rel)), Vmlinuz: filepath.Join(dir, "vmlinuz")}
	k.Modules = filepath.Join(dir, "root", "lib", "modules", k.Release)
	if _, err := os.Stat(k.Vmlinuz); err != nil {
		return nil, missing("vmlinuz")
	}
	return k, nil
}

// Module finds the kernel module name (e.g. "ppdev") in the package,
// compressed or not, and returns it as an initramfs file at
// /lib/modules/<file name>, ready for the guest's LoadModule.
func (k *Kernel) Module(name string) (File, error) {
	var found string
	err := filepath.WalkDir(k.Modules, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return err
		}
		base := d.Name()
		for _, ext := range [...]string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
			if base == name+ext {
				found = path
				return filepath.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return File{}, fmt.Errorf("qemu: looking for module %s: %w", name, err)
	}
	if found == "" {
		return File{}, fmt.Errorf("qemu: kernel %s has no module %s under %s", k.Release, name, k.Modules)
	}
	data, err := os.ReadFile(found)
	if err != nil {
		return File{}, err
	}
	return File{Path: "lib/modules/" + filepath.Base(found), Data: data}, nil
}

// BuildStatic builds the Go package pkg (a path or import path, resolved in
// dir) into a static linux/amd64 executable at out, with CGO_ENABLED=0 —
// as it must be to run as /init, and as the ioperm backend needs.
func BuildStatic(ctx context.Context, dir, pkg, out string) error {
	return goTool(ctx, dir, "build", "-trimpath", "-o", out, pkg)
}

// BuildStaticTest is BuildStatic for a package's test binary (go test -c).
func BuildStaticTest(ctx context.Context, dir, pkg, out string) error {
	return goTool(ctx, dir, "test", "-c", "-trimpath", "-o", out, pkg)
}

func goTool(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("qemu: go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// ParallelNull returns the QEMU arguments for an ISA parallel port at 0x378
// (IRQ 7) with nothing plugged in: the data register reads back what was
// written and the status lines are QEMU's idle defaults.
func ParallelNull() []string {
	return []string{"-chardev", "null,id=lpt0", "-device", "isa-parallel,chardev=lpt0"}
}

// ParallelPassthrough returns the QEMU arguments for an ISA parallel port at
// 0x378 whose every register access QEMU forwards as a ppdev ioctl on path
// (a host /dev/parportN, or a FUSE file that emulates one). Values cross as
// raw register bits.
func ParallelPassthrough(path string) []string {
	return []string{"-chardev", "parallel,id=lpt0,path=" + path, "-device", "isa-parallel,chardev=lpt0"}
}

// BaseCmdline starts every guest's kernel command line: the console on the
// serial port, a panic ends the machine, and no_timer_check, because under
// TCG on a loaded host the kernel's IO-APIC timer check can miss its ticks
// and panic ("IO-APIC + timer doesn't work!"), seen once in 8 guests booted
// at once on 2 busy cores.
const BaseCmdline = "console=ttyS0 panic=-1 no_timer_check"

// Options describe one guest.
type Options struct {
	Kernel string   // the kernel image (Kernel.Vmlinuz)
	Initrd string   // the initramfs (see WriteInitramfs)
	Append string   // extra kernel command line, after BaseCmdline
	Memory string   // guest RAM; default "256M"
	Args   []string // extra QEMU arguments, e.g. ParallelNull()
	// Console, when set, receives the serial console as it arrives (for
	// example a testing log writer). Wait returns it too.
	Console io.Writer
	// Stdin, when set, is typed into the guest's serial console (its
	// /dev/console input).
	Stdin io.Reader
}

// Machine is a running guest.
type Machine struct {
	out  syncBuffer
	done chan struct{}
	err  error
}

// Start boots a guest under TCG (-nographic -no-reboot: the guest's power
// off or reboot, or a kernel panic, ends QEMU). Cancelling ctx kills QEMU.
// Always call Wait.
func Start(ctx context.Context, o Options) (*Machine, error) {
	bin, err := FindQEMU()
	if err != nil {
		return nil, err
	}
	mem := o.Memory
	if mem == "" {
		mem = "256M"
	}
	args := []string{
		"-machine", "pc,accel=tcg", "-m", mem, "-nographic", "-no-reboot", "-nodefaults",
		"-serial", "stdio", "-monitor", "none",
		"-kernel", o.Kernel, "-initrd", o.Initrd,
		"-append", strings.TrimSpace(BaseCmdline + " " + o.Append),
	}
	args = append(args, o.Args...)
	m := &Machine{done: make(chan struct{})}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 2 * time.Second
	dieWithParent(cmd)
	m.out.tee = o.Console
	cmd.Stdin = o.Stdin
	cmd.Stdout = &m.out
	cmd.Stderr = &m.out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("qemu: starting %s: %w", bin, err)
	}
	go func() {
		err := cmd.Wait()
		if ctx.Err() != nil {
			err = fmt.Errorf("qemu: guest killed: %w", ctx.Err())
		} else if err != nil {
			err = fmt.Errorf("qemu: %w", err)
		}
		m.err = err
		close(m.done)
	}()
	return m, nil
}

// Wait waits for QEMU to exit and returns everything the guest and QEMU
// printed. The error is non-nil when QEMU failed or was killed.
func (m *Machine) Wait() ([]byte, error) {
	<-m.done
	return m.out.Bytes(), m.err
}

// Run is Start then Wait.
func Run(ctx context.Context, o Options) ([]byte, error) {
	m, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	return m.Wait()
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	tee io.Writer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tee != nil {
		b.tee.Write(p)
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
