package hil_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
	"github.com/ttlpapers/ttlpapers/internal/testenv"
)

// staticProgram builds the package pkg (relative to this one) static, for
// the machines.
func staticProgram(t *testing.T, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if err := qemu.BuildStatic(context.Background(), ".", pkg, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExecData runs the Libsplit-C report's two applications, unchanged,
// on four machines: the board through each one's port at 0x378 for the
// collectives, and their LAN for the TCP data network that global memory
// takes — the matrix multiply's bulk gets, the radix sort's stores. Each
// checks its own result.
func TestExecData(t *testing.T) {
	// The board server, in this process, answers eight machines' port
	// operations several times slower under the race detector.
	testenv.SlowUnderRace(t, "booting 2 × 4 machines that compute over the board")
	bin := requireHIL(t)
	const n = 4
	for _, c := range []struct {
		pkg  string
		args []string
		want string
	}{
		{"../examples/matmul", []string{"-block", "16"}, "result checked"},
		{"../examples/radixsort", []string{"-keys", "200", "-memory"}, "sorted and verified"},
	} {
		res := run(t, hil.Config{N: n, Binary: bin, Program: staticProgram(t, c.pkg), Args: c.args, Timeout: 3 * time.Minute})
		for _, m := range res.Machines {
			if m.Exit != 0 || m.Err != nil {
				t.Errorf("%s pe%d: exit %d, %v\n%s", c.pkg, m.PE, m.Exit, m.Err, m.Console)
			}
		}
		if pe0 := res.Machines[0].Console; !strings.Contains(string(pe0), c.want) {
			t.Errorf("%s: PE 0 did not say %q:\n%s", c.pkg, c.want, pe0)
		}
	}
}

// TestCheckProgram: a program the machines cannot run — dynamically
// linked, not an executable at all — is refused before anything boots.
func TestCheckProgram(t *testing.T) {
	notELF := filepath.Join(t.TempDir(), "script")
	os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755)
	if err := hil.CheckProgram(notELF); err == nil {
		t.Errorf("CheckProgram(a script) = nil")
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		if err := hil.CheckProgram(sh); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
			t.Errorf("CheckProgram(%s) = %v; want it refused as dynamically linked", sh, err)
		}
	}
}
