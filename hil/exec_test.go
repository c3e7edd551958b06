package hil_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ttlpapers/ttlpapers/hil"
	"github.com/ttlpapers/ttlpapers/internal/qemu"
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

// TestExecLAN runs an SPMD program of ours, unchanged, on four machines:
// the board through each one's port at 0x378 (its barriers), and their LAN,
// over which every PE reaches every other by TCP.
func TestExecLAN(t *testing.T) {
	bin := requireHIL(t)
	const n = 4
	res := run(t, hil.Config{N: n, Binary: bin, Program: staticProgram(t, "./testdata/lanprog"), Timeout: 2 * time.Minute})
	for _, m := range res.Machines {
		if m.Exit != 0 || m.Err != nil {
			t.Errorf("pe%d: exit %d, %v\n%s", m.PE, m.Exit, m.Err, m.Console)
			continue
		}
		console := strings.ReplaceAll(string(m.Console), "\r", "")
		for k := range n {
			if want := fmt.Sprintf("lan: PE %d got hello from PE %d\n", k, m.PE); k != m.PE && !strings.Contains(console, want) {
				t.Errorf("pe%d: no %q in\n%s", m.PE, want, m.Console)
			}
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
