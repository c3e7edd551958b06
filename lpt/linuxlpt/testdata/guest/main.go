// Command guest is the /init of the real-kernel test of package lpt
// (realport_linux_test.go): booted under QEMU with an emulated ISA parallel
// port at 0x378, it exercises the ioperm, ppdev and /dev/port backends and
// their errors, and prints one result line per check on the console.
//
// Booted with lockdown=integrity on the kernel command line it checks the
// lockdown errors instead. Run as "guest nobody" (it re-executes itself so,
// with uid 65534) it checks the errors an unprivileged user gets.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/ttlpapers/ttlpapers/internal/qemu"
	"github.com/ttlpapers/ttlpapers/lpt"
	"github.com/ttlpapers/ttlpapers/lpt/backend"
	"github.com/ttlpapers/ttlpapers/lpt/linuxlpt"
)

const (
	base    = lpt.BaseLPT1
	nowhere = lpt.BaseLPT2 // QEMU has no device there
	ppdev0  = "/dev/parport0"

	// steady masks the status lines that hold still: QEMU's printer
	// emulation toggles nAck and Busy on status reads (a handshake).
	steady = lpt.StatusError | lpt.StatusSelect | lpt.StatusPaperOut
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "nobody" {
		unprivileged()
		return
	}
	if err := qemu.Setup(); err != nil {
		qemu.Report("setup", err, "")
		qemu.PowerOff()
	}
	cmdline, _ := os.ReadFile("/proc/cmdline")
	if strings.Contains(string(cmdline), "lockdown=") {
		lockdown()
	} else {
		normal()
	}
	qemu.Report("done", nil, "")
	qemu.PowerOff()
}

// check runs one check and reports it; a panic is a failure.
func check(name string, f func() (string, error)) {
	detail, err := func() (detail string, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return f()
	}()
	qemu.Report(name, err, detail)
}

func normal() {
	status, ok := directChecks()
	if !ok {
		return
	}
	check("modules", func() (string, error) {
		for _, m := range []string{"parport", "parport_pc", "ppdev"} {
			if err := qemu.LoadModule("/lib/modules/"+m+".ko", ""); err != nil {
				return "", err
			}
		}
		return "", waitFor(ppdev0)
	})
	ppdevChecks(status)
	devportChecks(status)
	probeCheck()
	periphChecks()
	check("unprivileged", runUnprivileged)
}

// directChecks checks the ioperm backend and returns the steady status
// lines it read, or false when the port could not be opened.
func directChecks() (status uint8, ok bool) {
	threads := startThreads() // before ioperm: AllThreadsSyscall must reach them
	var direct lpt.Port
	check("direct-open", func() (string, error) {
		var err error
		direct, err = linuxlpt.OpenDirect(base)
		return "", err
	})
	if direct == nil {
		return 0, false
	}
	check("direct-data", func() (string, error) { return "", readback(direct, 0xff, direct.WriteData, direct.ReadData) })
	check("direct-control", func() (string, error) {
		old := direct.ReadControl()
		defer direct.WriteControl(old)
		return "", readback(direct, lpt.ControlPins, direct.WriteControl, direct.ReadControl)
	})
	check("direct-status", func() (string, error) {
		status = direct.ReadStatus() & steady
		for range 100 {
			if s := direct.ReadStatus() & steady; s != status {
				return "", fmt.Errorf("status lines %#02x then %#02x with nothing changing", status, s)
			}
		}
		if status != lpt.StatusSelect|lpt.StatusError {
			return "", fmt.Errorf("status lines %#02x; QEMU's idle printer shows Select and nError high (0x18)", status)
		}
		return fmt.Sprintf("status=%#02x", status), direct.Err()
	})
	check("direct-threads", func() (string, error) { return threads.run(direct) })
	check("direct-bench", func() (string, error) { return bench(direct) })
	check("direct-close", func() (string, error) {
		if err := direct.Close(); err != nil {
			return "", err
		}
		if v := direct.ReadStatus(); v != 0xff || !errors.Is(direct.Err(), linuxlpt.ErrClosed) {
			return "", fmt.Errorf("after Close: read %#02x, Err %v; want 0xff and ErrClosed", v, direct.Err())
		}
		return "", nil
	})
	check("direct-missing", func() (string, error) { return wantErr(linuxlpt.OpenDirect(nowhere))(linuxlpt.ErrNoPort, "SPP") })
	return status, true
}

// threadTest is port I/O from many goroutines, each locked to its own
// thread: early ones started before ioperm, late ones after.
type threadTest struct {
	wg, ready sync.WaitGroup
	start     chan lpt.Port
	release   chan struct{}
	errs      chan error
	tids      chan int
}

const earlyThreads, lateThreads = 8, 8

func startThreads() *threadTest {
	tt := &threadTest{
		start: make(chan lpt.Port), release: make(chan struct{}),
		errs: make(chan error, earlyThreads+lateThreads), tids: make(chan int, earlyThreads+lateThreads),
	}
	tt.ready.Add(earlyThreads + lateThreads)
	for range earlyThreads {
		tt.wg.Go(tt.worker)
	}
	return tt
}

func (tt *threadTest) worker() {
	runtime.LockOSThread() // kept to the end: no two workers share a thread
	p := <-tt.start
	tt.tids <- unix.Gettid()
	tt.ready.Done()
	<-tt.release
	tt.errs <- hammer(p)
}

// run starts the late threads (created after ioperm, they inherit it) and
// has every thread hammer the port at once.
func (tt *threadTest) run(p lpt.Port) (string, error) {
	p.WriteData(0xa5)
	for range lateThreads {
		tt.wg.Go(tt.worker)
	}
	for range earlyThreads + lateThreads {
		tt.start <- p
	}
	tt.ready.Wait()
	close(tt.release)
	tt.wg.Wait()
	close(tt.errs)
	close(tt.tids)
	seen := map[int]bool{}
	for t := range tt.tids {
		seen[t] = true
	}
	var all []error
	for e := range tt.errs {
		all = append(all, e)
	}
	if len(seen) < earlyThreads+lateThreads {
		all = append(all, fmt.Errorf("only %d distinct threads", len(seen)))
	}
	return fmt.Sprintf("%d goroutines on %d threads", earlyThreads+lateThreads, len(seen)), errors.Join(all...)
}

// ppdevChecks checks the ppdev backend against the status direct I/O read.
func ppdevChecks(status uint8) {
	var pp lpt.Port
	check("ppdev-open", func() (string, error) {
		var err error
		pp, err = linuxlpt.OpenPPDev(ppdev0)
		return "", err
	})
	if pp != nil {
		check("ppdev-data", func() (string, error) { return "", readback(pp, 0xff, pp.WriteData, pp.ReadData) })
		check("ppdev-control", func() (string, error) {
			old := pp.ReadControl()
			defer pp.WriteControl(old)
			return "", readback(pp, lpt.ControlPins, pp.WriteControl, pp.ReadControl)
		})
		check("ppdev-status", func() (string, error) {
			if s := pp.ReadStatus() & steady; s != status {
				return "", fmt.Errorf("PPRSTATUS %#02x, inb %#02x", s, status)
			}
			return "", pp.Err()
		})
		// ppdev reaches the same hardware register as inb.
		check("ppdev-is-hardware", func() (string, error) {
			pp.WriteData(0x69)
			d, err := linuxlpt.OpenDirect(base)
			if err != nil {
				return "", err
			}
			defer d.Close()
			if v := d.ReadData(); v != 0x69 {
				return "", fmt.Errorf("PPWDATA 0x69, inb reads %#02x", v)
			}
			return "", nil
		})
		check("ppdev-exclusive", func() (string, error) { return wantErr(linuxlpt.OpenPPDev(ppdev0))(unix.ENXIO, "rmmod lp") })
		check("ppdev-bench", func() (string, error) { return bench(pp) })
		check("ppdev-close", func() (string, error) {
			if err := pp.Close(); err != nil {
				return "", err
			}
			return "", claimable()
		})
	}
	check("ppdev-busy-lp", func() (string, error) {
		if err := qemu.LoadModule("/lib/modules/lp.ko", ""); err != nil {
			return "", err
		}
		defer qemu.UnloadModule("lp")
		return wantErr(linuxlpt.OpenPPDev(ppdev0))(unix.ENXIO, "rmmod lp")
	})
	check("ppdev-missing", func() (string, error) {
		return wantErr(linuxlpt.OpenPPDev("/dev/parport1"))(unix.ENOENT, "modprobe parport_pc ppdev")
	})
}

// claimable checks that nobody holds the ppdev claim on LPT1.
func claimable() error {
	q, err := linuxlpt.OpenPPDev(ppdev0)
	if err != nil {
		return fmt.Errorf("claiming %s: %w", ppdev0, err)
	}
	return q.Close()
}

func devportChecks(status uint8) {
	check("devport", func() (string, error) {
		p, err := linuxlpt.OpenDevPort(base)
		if err != nil {
			return "", err
		}
		defer p.Close()
		if err := readback(p, 0xff, p.WriteData, p.ReadData); err != nil {
			return "", err
		}
		if s := p.ReadStatus() & steady; s != status {
			return "", fmt.Errorf("/dev/port status %#02x, inb %#02x", s, status)
		}
		return bench(p)
	})
	check("devport-missing", func() (string, error) { return wantErr(linuxlpt.OpenDevPort(nowhere))(linuxlpt.ErrNoPort, "SPP") })
}

// probeCheck runs papersctl probe's backend.Probe; its GPIO summary runs
// host.Init.
func probeCheck() {
	check("probe", func() (string, error) {
		r := backend.Probe()
		var seen []string
		for _, f := range r.Found {
			seen = append(seen, f.Source+":"+f.Where)
		}
		var errs []error
		for _, want := range []string{"/proc/ioports:0378-037a", "/dev:/dev/parport0", "/sys/class/ppdev:/dev/parport0"} {
			if !slices.Contains(seen, want) {
				errs = append(errs, fmt.Errorf("found %q, not %s", seen, want))
			}
		}
		works := map[string]error{}
		for _, a := range r.Attempts {
			works[a.Spec] = a.Err
		}
		if len(r.Attempts) != 3 {
			errs = append(errs, fmt.Errorf("%d attempts, want 3 (ppdev, port and devport at 0x378 only)", len(r.Attempts)))
		}
		if !strings.Contains(r.GPIO, "LPT1_") {
			errs = append(errs, errors.New("the periph lpt driver registered no LPT1 pins"))
		}
		for _, spec := range []string{"ppdev:/dev/parport0", "port:0x378", "devport:0x378"} {
			if err, tried := works[spec]; !tried || err != nil {
				errs = append(errs, fmt.Errorf("%s: tried %v, error %v", spec, tried, err))
			}
		}
		return fmt.Sprintf("found=%q gpio=%q", seen, r.GPIO), errors.Join(errs...)
	})
}

// periphChecks runs after host.Init (probeCheck): the periph lpt driver
// registered LPT1's pins but claims the port only while a pin is in use.
func periphChecks() {
	check("periph-unclaimed", func() (string, error) { return "", claimable() })
	check("periph-claim", func() (string, error) {
		d0 := gpioreg.ByName("LPT1_D0")
		if d0 == nil {
			return "", errors.New("no LPT1_D0 pin")
		}
		if err := d0.Out(gpio.High); err != nil {
			return "", err
		}
		held := claimable()
		if err := d0.(interface{ Close() error }).Close(); err != nil {
			return "", err
		}
		if held == nil {
			return "", errors.New("LPT1 claimable while LPT1_D0 is in use")
		}
		if err := claimable(); err != nil {
			return "", fmt.Errorf("after closing LPT1_D0: %w", err)
		}
		return "claimed while in use: " + held.Error(), nil
	})
}

// runUnprivileged runs the unprivileged checks in a child as uid 65534.
func runUnprivileged() (string, error) {
	cmd := exec.Command("/init", "nobody")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}} // os/exec takes package syscall's type
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return "", err
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return "", errors.New("the unprivileged child did not finish within 30 s")
	}
}

// unprivileged runs as uid 65534, without capabilities.
func unprivileged() {
	check("nobody-direct", func() (string, error) { return wantErr(linuxlpt.OpenDirect(base))(unix.EPERM, "CAP_SYS_RAWIO") })
	check("nobody-devport", func() (string, error) { return wantErr(linuxlpt.OpenDevPort(base))(unix.EACCES, "CAP_SYS_RAWIO") })
	check("nobody-ppdev", func() (string, error) { return wantErr(linuxlpt.OpenPPDev(ppdev0))(unix.EACCES, "usermod -aG lp") })
}

func lockdown() {
	check("lockdown-mode", func() (string, error) {
		if m := linuxlpt.LockdownMode(); m == "" {
			return "", errors.New("lockdown= on the command line, yet LockdownMode reports none")
		} else {
			return "mode=" + m, nil
		}
	})
	check("lockdown-direct", func() (string, error) { return wantErr(linuxlpt.OpenDirect(base))(unix.EPERM, "lockdown") })
	check("lockdown-devport", func() (string, error) { return wantErr(linuxlpt.OpenDevPort(base))(unix.EPERM, "lockdown") })
	check("lockdown-ppdev", func() (string, error) {
		for _, m := range []string{"parport", "parport_pc", "ppdev"} {
			if err := qemu.LoadModule("/lib/modules/"+m+".ko", ""); err != nil {
				return "", err
			}
		}
		if err := waitFor(ppdev0); err != nil {
			return "", err
		}
		p, err := linuxlpt.OpenPPDev(ppdev0)
		if err != nil {
			return "", fmt.Errorf("ppdev must still work under lockdown: %w", err)
		}
		return "", p.Close()
	})
}

// hammer does port I/O from the calling thread.
func hammer(p lpt.Port) error {
	for range 2000 {
		p.WriteData(0xa5)
		if v := p.ReadData(); v != 0xa5 {
			return fmt.Errorf("thread %d read data %#02x, want 0xa5", unix.Gettid(), v)
		}
		p.ReadStatus()
	}
	return nil
}

// readback writes every value of mask's bits and reads each back.
func readback(p lpt.Port, mask uint8, write func(uint8), read func() uint8) error {
	for v := 0; v <= int(mask); v++ {
		if uint8(v)&^mask != 0 {
			continue
		}
		write(uint8(v))
		if got := read() & mask; got != uint8(v) {
			return fmt.Errorf("wrote %#02x, read back %#02x", v, got)
		}
	}
	return p.Err()
}

// bench measures the cost of a status read and a data write, and checks
// that neither allocates.
func bench(p lpt.Port) (string, error) {
	const n = 20000
	t := time.Now()
	for range n {
		p.ReadStatus()
	}
	in := time.Since(t) / n
	t = time.Now()
	for i := range n {
		p.WriteData(uint8(i))
	}
	out := time.Since(t) / n
	allocs := testing.AllocsPerRun(100, func() { p.WriteData(p.ReadStatus()) })
	var err error
	if allocs != 0 {
		err = fmt.Errorf("%v allocations per operation pair", allocs)
	}
	if e := p.Err(); e != nil {
		err = e
	}
	return fmt.Sprintf("read_ns=%d write_ns=%d allocs=%v", in.Nanoseconds(), out.Nanoseconds(), allocs), err
}

// wantErr checks that an open failed with target in its chain and advice
// (the *AccessError's Fix) containing hint.
func wantErr(p lpt.Port, err error) func(target error, hint string) (string, error) {
	return func(target error, hint string) (string, error) {
		if err == nil {
			p.Close()
			return "", fmt.Errorf("opened; want an error wrapping %v", target)
		}
		var ae *linuxlpt.AccessError
		if !errors.As(err, &ae) || !errors.Is(err, target) || !strings.Contains(ae.Fix, hint) {
			return "", fmt.Errorf("got %q; want an *linuxlpt.AccessError wrapping %v whose advice mentions %q", err, target, hint)
		}
		return fmt.Sprintf("message: %s", err), nil
	}
}

// waitFor waits for a device node the kernel creates asynchronously.
func waitFor(path string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within 5 s: %w", path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
