package linuxlpt_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/internal/testenv"

	"github.com/ttlpapers/ttlpapers/internal/qemu"
)

// TestRealKernel boots Debian's kernel under QEMU (TCG) on a PC with an
// emulated ISA parallel port and runs testdata/guest as /init: the ioperm,
// ppdev and /dev/port backends against a real kernel and port, and the
// errors for a missing port, a busy port, an unprivileged user and kernel
// lockdown. It skips only when QEMU or the kernel is not installed.
func TestRealKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("boots two virtual machines; skipped with -short")
	}
	testenv.Long(t, "boots two QEMU machines")
	if _, err := qemu.FindQEMU(); err != nil {
		testenv.Missing(t, "%v; then run scripts/fetch-kernel.sh", err)
	}
	k, err := qemu.FindKernel()
	if err != nil {
		testenv.Missing(t, "%v (needs apt-get install qemu-system-x86 and scripts/fetch-kernel.sh)", err)
	}
	initrd := buildGuest(t, k)

	t.Run("normal", func(t *testing.T) {
		results := boot(t, k, initrd, "")
		want := []string{
			"direct-open", "direct-data", "direct-control", "direct-status", "direct-threads",
			"direct-bench", "direct-close", "direct-missing", "modules", "ppdev-open", "ppdev-data",
			"ppdev-control", "ppdev-status", "ppdev-is-hardware", "ppdev-exclusive", "ppdev-bench",
			"ppdev-close", "ppdev-busy-lp", "ppdev-missing", "devport", "devport-missing", "probe",
			"periph-unclaimed", "periph-claim", "nobody-direct", "nobody-devport", "nobody-ppdev", "unprivileged", "done",
		}
		checkResults(t, results, want)
	})
	t.Run("lockdown", func(t *testing.T) {
		results := boot(t, k, initrd, "lockdown=integrity")
		checkResults(t, results, []string{"lockdown-mode", "lockdown-direct", "lockdown-devport", "lockdown-ppdev", "done"})
	})
}

// buildGuest builds the guest program and packs it with the parallel-port
// modules into an initramfs.
func buildGuest(t *testing.T, k *qemu.Kernel) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "init")
	if err := qemu.BuildStatic(ctx, ".", "./testdata/guest", bin); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	files := []qemu.File{{Path: "init", Data: data}}
	for _, m := range []string{"parport", "parport_pc", "ppdev", "lp"} {
		f, err := k.Module(m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(f.Path, ".ko") {
			t.Fatalf("module %s is compressed (%s); the guest loads only .ko files", m, f.Path)
		}
		files = append(files, f)
	}
	var cpio bytes.Buffer
	if err := qemu.WriteInitramfs(&cpio, files...); err != nil {
		t.Fatal(err)
	}
	initrd := filepath.Join(dir, "initrd.cpio")
	if err := os.WriteFile(initrd, cpio.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return initrd
}

func boot(t *testing.T, k *qemu.Kernel, initrd, cmdline string) []qemu.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := qemu.Run(ctx, qemu.Options{
		Kernel: k.Vmlinuz, Initrd: initrd, Append: "quiet " + cmdline, Args: qemu.ParallelNull(),
	})
	t.Logf("kernel %s, boot and guest checks took %v", k.Release, time.Since(start).Round(time.Millisecond))
	if err != nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%v\nconsole:\n%s", err, out)
	}
	rs := qemu.ParseResults(out)
	if len(rs) == 0 {
		t.Fatalf("the guest reported nothing; console:\n%s", out)
	}
	return rs
}

func checkResults(t *testing.T, rs []qemu.Result, want []string) {
	t.Helper()
	got := map[string]qemu.Result{}
	for _, r := range rs {
		got[r.Name] = r
		if !r.OK {
			t.Errorf("guest check failed: %v", r)
		} else {
			t.Logf("%v", r)
		}
	}
	for _, name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("guest did not report %q (crashed or stopped early?)", name)
		}
	}
}
